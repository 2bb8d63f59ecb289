/**
 * `delta-rlc/storage/s3`: the Amazon S3 backend (and S3-compatible services that honour
 * `If-None-Match` on puts). The AWS SDK is loaded when a store is first created. `openStore`
 * from the package root opens `s3://` locations with it as well.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable } from 'delta-rlc'
 * import { createS3Store } from 'delta-rlc/storage/s3'
 *
 * const storage = createS3Store('s3://lake/sales', { region: 'eu-west-1' })
 * const table = await DeltaTable.open('s3://lake/sales', { storage })
 * ```
 */

export type { RetryOptions } from '../storage/retry.js'
export {
  createS3Store,
  parseS3Location,
  type S3Location,
  type S3StoreOptions,
} from '../storage/s3-store.js'
