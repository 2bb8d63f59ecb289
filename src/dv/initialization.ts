import { roaringLibraryInitialize } from 'roaring-wasm'
import { InternalError } from '../errors/index.js'

let ready = false
let pending: Promise<void> | undefined

/**
 * Loads the WebAssembly Roaring library that backs every bitmap of this module.
 *
 * This is the single asynchronous entry point of `dv/`. Every function of the module that builds,
 * decodes or encodes a bitmap ({@link RoaringBitmapArray} factories, DV file parsing and building,
 * inline descriptors) requires this promise to have resolved and throws {@link InternalError}
 * otherwise. Pure text helpers (Z85, UUIDs, DV paths, CRC-32) work without it.
 *
 * Idempotent: concurrent and repeated calls share one initialisation.
 *
 * @returns a promise that resolves once bitmaps can be used
 * @throws {InternalError} when the WebAssembly module cannot be loaded
 */
export async function initDeletionVectors(): Promise<void> {
  if (ready) return
  pending ??= roaringLibraryInitialize().then(
    () => {
      ready = true
    },
    (cause: unknown) => {
      pending = undefined
      throw new InternalError('the roaring-wasm library failed to initialise', { cause })
    },
  )
  await pending
}

/**
 * Whether {@link initDeletionVectors} has resolved.
 *
 * @returns true once bitmaps can be used
 */
export function deletionVectorsReady(): boolean {
  return ready
}

/**
 * Guards an entry point that touches the WebAssembly library.
 *
 * @param what - the operation, for the message
 * @throws {InternalError} when {@link initDeletionVectors} has not resolved yet
 */
export function assertDeletionVectorsReady(what: string): void {
  if (!ready) {
    throw new InternalError(
      `${what} was called before initDeletionVectors() resolved; await it once at startup`,
    )
  }
}
