/**
 * The JSON Schema validator of the served `openapi.json`: ajv (draft 2020-12, as OpenAPI 3.1 embeds it) with
 * ajv-formats' formats and the two the document adds, `cidrv4` and `cidrv6` (a network as `address/prefix`).
 */
import { isIP } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** A new ajv that knows every format the document uses; `allErrors` off (the first error is enough). */
export function documentAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
  const cidr = (version: 4 | 6) => (value: string) => {
    const [address, prefix, ...rest] = value.split('/');
    return (
      rest.length === 0 &&
      isIP(address ?? '') === version &&
      /^\d{1,3}$/.test(prefix ?? '') &&
      Number(prefix) <= (version === 4 ? 32 : 128)
    );
  };
  ajv.addFormat('cidrv4', cidr(4));
  ajv.addFormat('cidrv6', cidr(6));
  return ajv;
}
