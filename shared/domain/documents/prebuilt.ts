import { brotliDecompressSync } from 'node:zlib';

/**
 * The handler of a document generated at build time (see `documents.ts`): `compressed` is the
 * document's JSON, Brotli-compressed and base64-encoded. It is decoded once per Lambda environment.
 * Returns the parsed document object.
 */
export function prebuiltDocument(compressed: string): () => Promise<unknown> {
  let document: unknown;
  return async () =>
    (document ??= JSON.parse(brotliDecompressSync(Buffer.from(compressed, 'base64')).toString('utf8')) as unknown);
}
