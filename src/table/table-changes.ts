/**
 * The change data feed a table reads through `DeltaTable.changes`: it lives with the scans
 * (`scan/table-changes.ts`), whose result types it shares, and the table layer takes it from here.
 */
export { type ChangesOptions, TableChanges } from '../scan/table-changes.js'
