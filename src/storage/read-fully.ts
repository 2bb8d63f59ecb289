/**
 * Reads a response body into one buffer, checking it against the announced length: a body cut
 * short by a dropped connection must never pass for the whole object.
 */
import { StorageError } from '../errors/index.js'

/**
 * Collects a response body.
 *
 * @param body - the body stream (Node streams and web streams are async iterables of chunks);
 *   undefined reads as empty
 * @param expectedLength - the announced length, when the response gave one
 * @param signal - aborts the read
 * @param path - the object, for messages
 * @returns a fresh `Uint8Array` that shares memory with nothing else
 * @throws {StorageError} (retryable) when fewer or more bytes arrive than announced
 */
export async function readFully(
  body: AsyncIterable<Uint8Array | string> | undefined,
  expectedLength: number | undefined,
  signal: AbortSignal,
  path: string,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  if (body !== undefined) {
    const onAbort = () => (body as { destroy?: (err?: unknown) => void }).destroy?.(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      for await (const chunk of body) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
        chunks.push(bytes)
        total += bytes.byteLength
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }
  if (expectedLength !== undefined && total !== expectedLength) {
    throw new StorageError(
      `Reading ${path} returned ${total} bytes where the response announced ${expectedLength}: the connection was cut`,
      { path, retryable: true, hint: 'The failure is transient; retry the read.' },
    )
  }
  const out = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}
