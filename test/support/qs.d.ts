/**
 * Types of the few `qs` functions the loopback fake Stripe API uses (`qs` comes with the `stripe` SDK,
 * which encodes its form bodies with it; it ships no types of its own).
 */
declare module 'qs' {
  /** Parses `a[b]=c&d[0]=e` into nested objects and arrays, as Stripe reads its form bodies. */
  export function parse(
    text: string,
    options?: { depth?: number; arrayLimit?: number; parameterLimit?: number },
  ): Record<string, unknown>;
  const qs: { parse: typeof parse };
  export default qs;
}
