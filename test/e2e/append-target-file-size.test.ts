/**
 * Appends cut their rows into files near the table's `delta.targetFileSize` (128 MiB by default,
 * as Delta's); the `targetFileSize` option of `append` wins over the property.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const MiB = 1024 * 1024
const ROWS = 1_000_000

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function newTable(properties?: Record<string, string>): Promise<DeltaTable> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-target-size-'))
  roots.push(root)
  return DeltaTable.create(join(root, 't'), {
    schema: 'id long not null, payload string not null',
    properties,
  })
}

/** Rows whose payload does not compress away, so the files have a real size to cut. */
function manyRows(n: number): { id: bigint; payload: string }[] {
  const rows = new Array<{ id: bigint; payload: string }>(n)
  for (let i = 0; i < n; i++) rows[i] = { id: BigInt(i), payload: ((i * 2654435761) >>> 0).toString(36) }
  return rows
}

async function fileSizes(table: DeltaTable): Promise<number[]> {
  const files = await (await table.snapshot()).files()
  return files.map((f) => Number(f.size))
}

async function assertRowsReadBack(table: DeltaTable, expected: readonly { id: bigint; payload: string }[]) {
  const got = await table.scan().toArray()
  assert.equal(got.length, expected.length)
  got.sort((a, b) => Number((a.id as bigint) - (b.id as bigint)))
  for (let i = 0; i < got.length; i++) {
    const row = got[i]
    if (row?.id !== expected[i]?.id || row?.payload !== expected[i]?.payload) {
      assert.fail(
        `row ${i}: ${String(row?.id)}/${String(row?.payload)} read back, ${expected[i]?.payload} appended`,
      )
    }
  }
}

describe('append file size', () => {
  it('a 1M-row append into a table with delta.targetFileSize=1mb writes several files near 1 MiB', async () => {
    const table = await newTable({ 'delta.targetFileSize': '1mb' })
    try {
      const rows = manyRows(ROWS)
      await table.append(rows)
      const sizes = await fileSizes(table)
      const total = sizes.reduce((a, b) => a + b, 0)
      assert.ok(sizes.length >= 3, `expected several files, got ${sizes.length} (${total} bytes)`)
      // DuckDB closes a file once it passes the target, at a row-group boundary, and each writer
      // thread may leave a short tail: files overshoot by at most a row group, few fall short.
      assert.ok(Math.max(...sizes) <= 2.5 * MiB, `sizes ${sizes.join(', ')}`)
      const near = sizes.filter((s) => s >= 0.75 * MiB).length
      assert.ok(near >= 0.75 * sizes.length, `sizes ${sizes.join(', ')}`)
      await assertRowsReadBack(table, rows)
    } finally {
      await table.close()
    }
  })

  it('the append option targetFileSize wins over the table property', async () => {
    const table = await newTable({ 'delta.targetFileSize': '1mb' })
    try {
      const rows = manyRows(ROWS)
      await table.append(rows, { targetFileSize: 128 * MiB })
      assert.equal((await fileSizes(table)).length, 1)
      await assertRowsReadBack(table, rows)
    } finally {
      await table.close()
    }
  })

  it('a table cannot be created with a malformed delta.targetFileSize', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-target-size-'))
    roots.push(root)
    await assert.rejects(
      DeltaTable.create(join(root, 't'), {
        schema: 'id long not null',
        properties: { 'delta.targetFileSize': 'large' },
      }),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === 'delta.targetFileSize',
    )
  })
})
