/**
 * Every deletion vector of the Spark-written golden tables, decoded and re-encoded byte for byte,
 * and checked against the tables' expected row counts and live values.
 *
 * The log is read here with plain JSON.parse (the commits cover every version, so the Parquet
 * checkpoint of `dv-partitioned-with-checkpoint` is not needed). Data files are read with DuckDB,
 * using `file_row_number` as the row position a DV refers to.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { type DvDescriptorLike, resolveDvLocation } from '../../../src/dv/descriptor.js'
import { buildDvFile, parseDvAt } from '../../../src/dv/dv-file.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import type { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { serializeRoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array-codec.js'
import { InvalidDeletionVectorError } from '../../../src/errors/index.js'

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))
const goldenRoot = path.join(path.resolve(repoRoot, '../shared'), 'fixtures', 'delta-golden')
const skip = existsSync(goldenRoot) ? false : `golden fixtures not found at ${goldenRoot}`

const SPECIAL_CHAR_PLACEHOLDER = '{{FOLDER_WITH_SPECIAL_CHAR}}'

interface FileAction {
  readonly path: string
  readonly stats?: string
  readonly deletionVector?: DvDescriptorLike & { readonly offset?: number }
}
type Action = { readonly add?: FileAction; readonly remove?: FileAction }

interface ExpectedTable {
  readonly rowCount: number
  readonly partitionColumns: readonly string[]
  readonly versions?: Readonly<Record<string, { readonly rowCount: number }>>
  readonly dvFileRenames?: Readonly<Record<string, string>>
  readonly expectedRows?: {
    readonly columns: readonly string[]
    readonly rows: readonly (readonly unknown[])[]
  }
}

/** A table's JSON commits, one action list per version, and its expected.json entry. */
interface GoldenTable {
  readonly name: string
  readonly dir: string
  readonly commits: readonly (readonly Action[])[]
  readonly expected: ExpectedTable
}

function loadTables(): GoldenTable[] {
  if (skip) return []
  const expectedAll = JSON.parse(readFileSync(path.join(goldenRoot, 'expected.json'), 'utf8')) as Record<
    string,
    ExpectedTable
  >
  const tables: GoldenTable[] = []
  for (const name of readdirSync(goldenRoot).sort()) {
    const logDir = path.join(goldenRoot, name, '_delta_log')
    if (!existsSync(logDir)) continue
    const commitFiles = readdirSync(logDir)
      .filter((file) => /^\d{20}\.json$/.test(file))
      .sort()
    const commits = commitFiles.map((file) =>
      readFileSync(path.join(logDir, file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Action),
    )
    const hasDv = commits.some((actions) =>
      actions.some((a) => a.add?.deletionVector ?? a.remove?.deletionVector),
    )
    const contiguous = commitFiles.every((file, i) => Number(file.slice(0, 20)) === i)
    if (hasDv && contiguous && expectedAll[name]) {
      tables.push({ name, dir: path.join(goldenRoot, name), commits, expected: expectedAll[name] })
    }
  }
  return tables
}

const tables = loadTables()

/** The DV file a descriptor points at, on disk, after the README's renames and substitutions. */
function dvFilePath(table: GoldenTable, descriptor: DvDescriptorLike): string {
  if (descriptor.storageType === 'p') {
    const substituted = descriptor.pathOrInlineDv.replace(
      SPECIAL_CHAR_PLACEHOLDER,
      `${table.dir.split('/').map(encodeURIComponent).join('/')}/folder&with%25special%20char`,
    )
    const location = resolveDvLocation({ ...descriptor, pathOrInlineDv: substituted })
    assert.equal(location.kind, 'absolute')
    return location.kind === 'absolute' ? location.decodedUri.replace(/^file:/, '') : ''
  }
  const location = resolveDvLocation(descriptor)
  assert.equal(location.kind, 'relative', 'golden tables hold no inline DVs')
  if (location.kind !== 'relative') return ''
  const renamed = Object.entries(table.expected.dvFileRenames ?? {}).find(
    ([, spec]) => spec === location.path,
  )
  return path.join(table.dir, renamed ? renamed[0] : location.path)
}

function dvKey(dv: DvDescriptorLike | undefined): string {
  return dv ? `${dv.storageType}${dv.pathOrInlineDv}@${dv.offset ?? ''}` : ''
}

function allDescriptors(table: GoldenTable): DvDescriptorLike[] {
  const seen = new Map<string, DvDescriptorLike>()
  for (const actions of table.commits) {
    for (const action of actions) {
      for (const dv of [action.add?.deletionVector, action.remove?.deletionVector]) {
        if (dv) seen.set(dvKey(dv), dv)
      }
    }
  }
  return [...seen.values()]
}

/** Active adds at `version`, keyed like Delta's reconciliation: (path, DV unique id). */
function activeFiles(table: GoldenTable, version: number): FileAction[] {
  const active = new Map<string, FileAction>()
  for (const actions of table.commits.slice(0, version + 1)) {
    for (const action of actions) {
      if (action.add) active.set(`${action.add.path}|${dvKey(action.add.deletionVector)}`, action.add)
      if (action.remove) active.delete(`${action.remove.path}|${dvKey(action.remove.deletionVector)}`)
    }
  }
  return [...active.values()]
}

/** The decoded DV of `file`, or undefined when it has none. */
function deletedRows(table: GoldenTable, file: FileAction): RoaringBitmapArray | undefined {
  const dv = file.deletionVector
  if (!dv) return undefined
  const dvPath = dvFilePath(table, dv)
  return parseDvAt(readFileSync(dvPath), dv.offset ?? 0, dv.sizeInBytes, dv.cardinality, dvPath)
}

/** The physical Parquet name of a logical column (column mapping keeps it in the field metadata). */
function physicalName(table: GoldenTable, column: string): string {
  for (const actions of table.commits) {
    for (const action of actions as readonly { metaData?: { schemaString?: string } }[]) {
      const schema = action.metaData?.schemaString
      if (!schema) continue
      const fields = (
        JSON.parse(schema) as { fields: { name: string; metadata?: Record<string, unknown> }[] }
      ).fields
      const field = fields.find((f) => f.name === column)
      const physical = field?.metadata?.['delta.columnMapping.physicalName']
      return typeof physical === 'string' ? physical : column
    }
  }
  return column
}

describe('golden deletion vectors', { skip }, () => {
  let instance: DuckDBInstance
  let duck: DuckDBConnection

  before(async () => {
    await initDeletionVectors()
    instance = await DuckDBInstance.create(':memory:')
    duck = await instance.connect()
  })
  after(() => {
    duck?.closeSync()
    instance?.closeSync()
  })

  /** Values of `column` in a data file, indexed by row position. */
  async function columnByPosition(table: GoldenTable, file: FileAction, column: string): Promise<number[]> {
    const dataPath = path.join(table.dir, decodeURIComponent(file.path)).replaceAll("'", "''")
    const reader = await duck.runAndReadAll(
      `SELECT "${physicalName(table, column)}", file_row_number FROM read_parquet('${dataPath}', file_row_number = true, hive_partitioning = false) ORDER BY file_row_number`,
    )
    return reader.getRows().map((row, i) => {
      assert.equal(Number(row[1]), i)
      return Number(row[0])
    })
  }

  it('finds the DV tables of the pack', () => {
    assert.deepEqual(
      tables.map((t) => t.name),
      [
        'dv-partitioned-with-checkpoint',
        'dv-with-columnmapping',
        'log-replay-dv-key-cases',
        'partitioned-table-with-dv-large',
        'table-with-dv-large',
        'table-with-dv-small',
        'table-with-dv-special-char',
      ],
    )
  })

  for (const table of tables) {
    describe(table.name, () => {
      it('decodes every DV to its cardinality and re-encodes it byte for byte, framing and CRC included', () => {
        const descriptors = allDescriptors(table)
        assert.ok(descriptors.length > 0)
        for (const dv of descriptors) {
          const dvPath = dvFilePath(table, dv)
          const file = readFileSync(dvPath)
          const offset = Number(dv.offset ?? 0)
          const size = Number(dv.sizeInBytes)
          const bitmap = parseDvAt(file, offset, size, dv.cardinality, dvPath)
          assert.equal(bitmap.cardinalityBigInt, BigInt(dv.cardinality))
          assert.deepEqual(
            serializeRoaringBitmapArray(bitmap),
            new Uint8Array(file.subarray(offset + 4, offset + 4 + size)),
          )
          assert.deepEqual(
            buildDvFile([bitmap]).bytes.subarray(1),
            new Uint8Array(file.subarray(offset, offset + size + 8)),
          )
        }
      })

      it('rebuilds every DV file whole from the DVs its descriptors point at', () => {
        const byFile = new Map<string, DvDescriptorLike[]>()
        for (const dv of allDescriptors(table)) {
          const dvPath = dvFilePath(table, dv)
          byFile.set(dvPath, [...(byFile.get(dvPath) ?? []), dv])
        }
        for (const [dvPath, dvs] of byFile) {
          const file = readFileSync(dvPath)
          const ordered = dvs.sort((a, b) => Number(a.offset) - Number(b.offset))
          const bitmaps = ordered.map((dv) =>
            parseDvAt(file, dv.offset ?? 0, dv.sizeInBytes, dv.cardinality, dvPath),
          )
          const rebuilt = buildDvFile(bitmaps)
          assert.deepEqual(
            rebuilt.entries.map((e) => e.offset),
            ordered.map((dv) => Number(dv.offset)),
          )
          assert.deepEqual(rebuilt.bytes, new Uint8Array(file))
        }
      })

      it('gives, at every version, the expected row count as numRecords minus decoded DV cardinalities', () => {
        const versions = Object.entries(table.expected.versions ?? {})
        versions.push([String(table.commits.length - 1), { rowCount: table.expected.rowCount }])
        for (const [version, { rowCount }] of versions) {
          let live = 0
          for (const file of activeFiles(table, Number(version))) {
            live += (JSON.parse(file.stats ?? '{}') as { numRecords: number }).numRecords
            live -= deletedRows(table, file)?.cardinality ?? 0
          }
          assert.equal(live, rowCount, `version ${version}`)
        }
      })

      it('leaves exactly the expected live values at the latest version', async () => {
        const rows = table.expected.expectedRows
        assert.ok(rows)
        const index = rows.columns.findIndex(
          (c, i) => !table.expected.partitionColumns.includes(c) && typeof rows.rows[0]?.[i] === 'number',
        )
        const column = rows.columns[index]!
        const live: number[] = []
        for (const file of activeFiles(table, table.commits.length - 1)) {
          const deleted = deletedRows(table, file)
          const values = await columnByPosition(table, file, column)
          values.forEach((value, position) => {
            if (!deleted?.has(position)) live.push(value)
          })
        }
        const expected = rows.rows.map((row) => Number(row[index]))
        assert.deepEqual(
          live.sort((a, b) => a - b),
          expected.sort((a, b) => a - b),
        )
      })
    })
  }

  const deletions: ReadonlyArray<readonly [string, string, number, readonly number[]]> = [
    ['table-with-dv-large', 'value', 1, [0, 180, 300, 700, 1800]],
    ['partitioned-table-with-dv-large', 'id', 1, [0, 180, 225, 308, 756, 1007, 1503]],
  ]
  for (const [name, column, version, expected] of deletions) {
    it(`${name} v${version} deletes exactly the rows holding ${column} in {${expected.join(', ')}}`, async () => {
      const table = tables.find((t) => t.name === name)
      assert.ok(table)
      const deletedValues: number[] = []
      for (const file of activeFiles(table, version)) {
        const deleted = deletedRows(table, file)
        if (!deleted) continue
        const values = await columnByPosition(table, file, column)
        for (const position of deleted) deletedValues.push(values[position]!)
      }
      assert.deepEqual(
        deletedValues.sort((a, b) => a - b),
        [...expected],
      )
    })
  }

  it('rejects the not-encoded variant of the special-character DV path as a malformed URI', () => {
    const table = tables.find((t) => t.name === 'table-with-dv-special-char')
    assert.ok(table)
    const dv = allDescriptors(table)[0]!
    const raw = dv.pathOrInlineDv.replace(SPECIAL_CHAR_PLACEHOLDER, `${table.dir}/folder&with%special char`)
    assert.throws(
      () => resolveDvLocation({ ...dv, pathOrInlineDv: raw }),
      (err: unknown) =>
        err instanceof InvalidDeletionVectorError && err.path === raw && /escape/.test(err.message),
    )
  })
})
