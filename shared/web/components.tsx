/** @jsx h */
import { randomUUID } from 'node:crypto';
import { SUBSCRIPTION_STATUSES } from '../catalogues/subscription-statuses.js';
import type { ProblemDocument } from '../errors.js';
import { h, type Child, type Html } from './html.js';

/**
 * The markup every HTML surface shares (DESIGN D21, D26, D35): the idempotency field of a form, problem
 * details shown readably with their hint, timestamps, badges and tables. Every text is escaped by the runtime.
 */

/**
 * The pages' icon, inline (an SVG data URI), so browsers never ask for `/favicon.ico`, which no surface serves. The CSP
 * allows `data:` images (`headers.ts`).
 */
export function Favicon(): Html {
  return (
    <link
      rel="icon"
      href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='7' fill='%232563eb'/%3E%3C/svg%3E"
    />
  );
}

/** A fresh idempotency key for a form: a double-clicked submit sends it twice and runs once (DESIGN D3). */
export function IdempotencyField(): Html {
  return <input type="hidden" name="idempotency_key" value={randomUUID()} />;
}

/** A problem document as a readable message: title, detail, field errors and the catalogue's hint. */
export function ProblemView(props: { problem: ProblemDocument }): Html {
  const { problem } = props;
  return (
    <div class="problem" role="alert">
      <strong>
        {problem.title} ({problem.code})
      </strong>
      <p>{problem.detail}</p>
      {problem.errors?.length ? (
        <ul>
          {problem.errors.map((error) => (
            <li>
              <code>{error.path}</code>: {error.message}
            </li>
          ))}
        </ul>
      ) : (
        ''
      )}
      <p class="hint">What to do: {problem.hint}</p>
    </div>
  );
}

/** A timestamp shown in UTC, or a dash. */
export function When(props: { at: string | null | undefined }): Html {
  if (!props.at) return <span class="hint">—</span>;
  return (
    <time datetime={props.at}>
      {props.at
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
        .replace(/Z$/, ' UTC')}
    </time>
  );
}

/** A coloured badge. */
export function Badge(props: { color: string; children?: Child }): Html {
  return <span class={`badge ${props.color}`}>{props.children}</span>;
}

/** A subscription status with the catalogue's label and colour (`service://enums/subscription-status`). */
export function SubscriptionStatusBadge(props: { status: string }): Html {
  const definition = SUBSCRIPTION_STATUSES.find((status) => status.value === props.status);
  return <Badge color={definition?.color ?? 'gray'}>{definition?.label ?? props.status}</Badge>;
}

/**
 * The table behind {@link DataTable}: a header row of `head` over `children` rows; at 640 px and below each
 * row becomes a card of label and value pairs (its cells carry `data-label` with their column's name, which
 * DataTable writes from its column list), DESIGN D21.
 */
function Table(props: { caption?: string; head: readonly string[]; children?: Child; id?: string }): Html {
  return (
    <div class="table-wrap" id={props.id}>
      <table class="stacked">
        {props.caption ? <caption class="hint">{props.caption}</caption> : ''}
        <thead>
          <tr>
            {props.head.map((cell) => (
              <th scope="col">{cell}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * One column of a {@link DataTable}: its name (the header, and each cell's `data-label`), its cell for a row, and an
 * optional class for the cells.
 */
export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
  class?: string;
}

/**
 * A {@link Table} whose column names are written once: `columns` gives the header and, for each row of
 * `rows`, the cells with their column's name in `data-label`, so at 640 px and below each row becomes a
 * card of label and value pairs instead of scrolling sideways (DESIGN D21). With no rows, one cell across
 * the table says `empty`.
 */
export function DataTable<T>(props: {
  id?: string;
  caption?: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  empty: string;
}): Html {
  return (
    <Table id={props.id} caption={props.caption} head={props.columns.map((column) => column.label)}>
      {props.rows.length === 0 ? (
        <tr>
          <td colspan={String(props.columns.length)} class="hint">
            {props.empty}
          </td>
        </tr>
      ) : (
        props.rows.map((row) => (
          <tr>
            {props.columns.map((column) => (
              <td data-label={column.label} class={column.class}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))
      )}
    </Table>
  );
}
