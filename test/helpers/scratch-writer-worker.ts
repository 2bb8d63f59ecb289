/**
 * A process that keeps appending rows to a table with its scratch directory at a given path, for
 * a test to kill with SIGKILL while a write job's scratch entry exists.
 */
import { DeltaTable } from '../../src/table/delta-table.js'

const [dir = '', scratchDir = ''] = process.argv.slice(2)
const table = await DeltaTable.open(dir, { engineOptions: { scratchDir } })
const rows = Array.from({ length: 50_000 }, (_, i) => ({ id: BigInt(i), name: `row-${i}` }))
for (;;) await table.append(rows)
