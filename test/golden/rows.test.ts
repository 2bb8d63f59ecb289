/**
 * Reads the rows of every golden table with data through the DV-aware scan and compares them
 * with `expected.json`: the latest rows as an unordered multiset, the row count of every listed
 * version, the documented filters, and the documented read failures. The assertions are shared
 * with the remote-store suite (`test/helpers/golden-checks.ts`).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DeltaTable } from '../../src/table/delta-table.js'
import { GOLDEN_SKIP, type GoldenExpectation, loadExpected, prepareGoldenTable } from '../helpers/golden.js'
import {
  assertColumnProjection,
  assertGoldenFilters,
  assertGoldenRows,
  assertVacuumedVersionsFail,
  GOLDEN_FILTERS,
  readableGoldenTables,
} from '../helpers/golden-checks.js'

const expected = await loadExpected()

async function withTable<T>(
  name: string,
  fn: (t: DeltaTable) => Promise<T>,
  opts?: { specialCharEncoded?: boolean },
) {
  const prepared = await prepareGoldenTable(name, opts)
  const table = await DeltaTable.open(prepared.dir)
  try {
    return await fn(table)
  } finally {
    await table.close()
    await prepared.cleanup()
  }
}

describe('golden tables: rows through the DV-aware scan', { skip: GOLDEN_SKIP }, () => {
  for (const name of readableGoldenTables(expected)) {
    const exp = expected[name] as GoldenExpectation
    if (!exp.expectedRows || exp.rowCount === null) continue
    it(`${name}: latest rows equal expectedRows, and every listed version has its row count`, () =>
      withTable(name, (t) => assertGoldenRows(name, t, exp)))
  }

  it('snapshot-vacuumed: data of vacuumed versions cannot be read, the latest can', () =>
    withTable('snapshot-vacuumed', assertVacuumedVersionsFail))

  it('table-with-dv-special-char: the not-encoded absolute DV path is refused', async () => {
    await withTable(
      'table-with-dv-special-char',
      async (table) => {
        await assert.rejects(table.scan().toArray(), { code: 'DELTA_INVALID_DELETION_VECTOR' })
      },
      { specialCharEncoded: false },
    )
  })

  for (const name of new Set(GOLDEN_FILTERS.map(([t]) => t))) {
    it(`${name}: the documented filters select their documented rows`, () =>
      withTable(name, (t) => assertGoldenFilters(name, t)))
  }

  it('columns option projects and orders columns', () =>
    withTable('dv-partitioned-with-checkpoint', assertColumnProjection))
})
