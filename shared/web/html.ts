/// <reference types="@kitajs/html/htmx.d.ts" />
import { attributesToString, escapeHtml, isVoidElement } from '@kitajs/html';

/**
 * Dashboard JSX runtime (D21) on `@kitajs/html` types and attribute escaping, escaping EVERY text child by default:
 * only elements, fragments and {@link raw} (fixed, trusted text) go in as is. Files start with `/** @jsx h *\/` and
 * `/** @jsxFrag Fragment *\/` and import both.
 */

const brand: unique symbol = Symbol('Html');

/** Markup made by this runtime: a string at run time (a `String` object) that is never escaped again. */
export type Html = string & { readonly [brand]: true };

class SafeHtml extends String {}

/** Markup from trusted text (never from user input): inserted without escaping. */
function raw(markup: string): Html {
  return new SafeHtml(markup) as unknown as Html;
}

/** A child of an element: markup, text (escaped), a number, nothing, or a list of children. */
export type Child = Html | string | number | boolean | null | undefined | Child[];

function renderChild(child: Child): string {
  if (child === null || child === undefined || child === false || child === true) return '';
  if (child instanceof SafeHtml) return child.toString();
  if (Array.isArray(child)) return child.map(renderChild).join('');
  return escapeHtml(String(child));
}

type Props = Record<string, unknown> & { children?: Child };
type Component = (props: Props) => Html;

/** The JSX factory (`/** @jsx h *\/`): renders an element (or calls a component) to {@link Html}. */
export function h(tag: string | Component, attributes: Record<string, unknown> | null, ...children: Child[]): Html {
  const props: Props = { ...(attributes ?? {}) };
  if (typeof tag === 'function') return tag({ ...props, children: children.length === 1 ? children[0] : children });
  // `safe` is kitajs's escaping switch (escaping is always on here); `__self`/`__source` come from dev-mode JSX
  // transforms.
  delete props.safe;
  delete props.__self;
  delete props.__source;
  const attributeText = attributesToString(props);
  if (children.length === 0 && isVoidElement(tag)) return raw(`<${tag}${attributeText}/>`);
  return raw(`<${tag}${attributeText}>${renderChild(children)}</${tag}>`);
}

/** The JSX fragment (`/** @jsxFrag Fragment *\/`). */
export function Fragment(props: { children?: Child }): Html {
  return raw(renderChild(props.children));
}

/** A whole HTML document: the doctype and the root element. */
export function documentOf(root: Html): string {
  return `<!doctype html>\n${root.toString()}`;
}

// The JSX types of the `h` factory (TypeScript looks them up as `h.JSX`): kitajs's elements and attributes.
export declare namespace h {
  namespace JSX {
    type Element = Html;
    type IntrinsicElements = globalThis.JSX.IntrinsicElements;
    interface ElementChildrenAttribute {
      children: unknown;
    }
  }
}
