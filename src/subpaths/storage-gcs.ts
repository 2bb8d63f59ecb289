/**
 * `delta-rlc/storage/gcs`: the Google Cloud Storage backend (puts-if-absent with
 * `ifGenerationMatch=0`). The Google Cloud Storage SDK is loaded when a store is first created.
 * `openStore` from the package root opens `gs://` locations with it as well.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable } from 'delta-rlc'
 * import { createGcsStore } from 'delta-rlc/storage/gcs'
 *
 * const storage = createGcsStore('gs://lake/sales', { keyFilename: '/secrets/sa.json' })
 * const table = await DeltaTable.open('gs://lake/sales', { storage })
 * ```
 */

export {
  createGcsStore,
  type GcsLocation,
  type GcsServiceAccountKey,
  type GcsStoreOptions,
  parseGcsLocation,
} from '../storage/gcs-store.js'
export type { RetryOptions } from '../storage/retry.js'
