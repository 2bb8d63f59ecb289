/**
 * `delta-rlc/storage/azure`: the Azure Blob Storage backend (also Azurite). The Azure SDK is
 * loaded when a store is first created, so importing this entry costs nothing until then.
 * `openStore` from the package root opens `az://`, `abfss://` and Azure `https://` locations
 * with it as well.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable } from 'delta-rlc'
 * import { createAzureStore } from 'delta-rlc/storage/azure'
 *
 * const storage = createAzureStore('az://tables/sales', { connectionString })
 * const table = await DeltaTable.open('az://tables/sales', { storage })
 * ```
 */

export {
  type AzureLocation,
  type AzureStoreOptions,
  type AzureTokenCredential,
  createAzureStore,
  parseAzureLocation,
} from '../storage/azure-store.js'
export type { RetryOptions } from '../storage/retry.js'
