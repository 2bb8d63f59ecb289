/**
 * 10,000 random decimals at (38,18), (18,2) and (9,0), written as text in the many ways a file
 * may hold them (signs, leading and trailing zeros, no digit before the point, exponents), come
 * back exactly from a table through every input: CSV and JSON lines files, a Parquet file, JS
 * objects, and Arrow. Each input is one file (or one call) holding every value.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import fc from 'fast-check'
import { DeltaTable } from '../../src/table/delta-table.js'

const COUNT = 10_000
const TYPES = [
  { column: 'd38', precision: 38, scale: 18 },
  { column: 'd18', precision: 18, scale: 2 },
  { column: 'd9', precision: 9, scale: 0 },
] as const
const SCHEMA = `id long, ${TYPES.map((t) => `${t.column} decimal(${t.precision},${t.scale})`).join(', ')}`

/** One decimal: its canonical text (as a scan returns it) and its text in a CSV and a JSON file. */
interface Value {
  readonly canonical: string
  readonly csv: string
  readonly json: string
}

const digits = (max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: max })

function value(precision: number, scale: number): fc.Arbitrary<Value> {
  const whole = precision - scale
  // Often the widest digits the type holds, so the edges are as common as the middle.
  const part = (max: number) => fc.oneof(digits(max), fc.constant('9'.repeat(max)), fc.constant(''))
  return fc
    .record({
      negative: fc.boolean(),
      int: part(whole),
      frac: part(scale),
      pad: fc.integer({ min: 0, max: 3 }),
      form: fc.constantFrom('plain', 'padded', 'exponent'),
    })
    .map(({ negative, int, frac, pad, form }) => {
      const intDigits = int.replace(/^0+/, '')
      const fracDigits = frac.replace(/0+$/, '')
      const zero = intDigits === '' && fracDigits === ''
      const sign = negative && !zero ? '-' : ''
      const canonical = `${sign}${intDigits || '0'}${scale > 0 ? `.${fracDigits.padEnd(scale, '0')}` : ''}`
      const jsonPlain = `${sign}${intDigits || '0'}${fracDigits === '' ? '' : `.${fracDigits}`}`
      let csv = jsonPlain
      let json = jsonPlain
      if (form === 'padded') {
        // Leading zeros, a plus sign, trailing zeros up to the scale, no digit before the point.
        const t = `${'0'.repeat(pad)}${intDigits}.${fracDigits.padEnd(Math.min(scale, fracDigits.length + pad), '0')}`
        csv = `${sign === '' ? '+' : '-'}${t === '.' ? '0' : t}`
      } else if (form === 'exponent') {
        // The digits as one integer and the point moved by the exponent: exact only as text.
        const all = `${intDigits}${fracDigits}`.replace(/^0+/, '')
        const trailing = fracDigits === '' ? (/0*$/.exec(all)?.[0].length ?? 0) : 0
        const mantissa = (trailing > 0 ? all.slice(0, -trailing) : all) || '0'
        const exponent = fracDigits === '' ? trailing : -fracDigits.length
        csv = `${sign}${mantissa}${pad % 2 === 0 ? 'e' : 'E'}${exponent}`
        json = csv
      }
      return { canonical, csv, json }
    })
}

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

describe('decimals round-trip exactly through every input', () => {
  it(`${COUNT} random decimals at (38,18), (18,2), (9,0): CSV, JSON lines, Parquet, JS objects, Arrow`, async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    const rows = fc.sample(fc.tuple(...TYPES.map((t) => value(t.precision, t.scale))), {
      numRuns: COUNT,
      seed,
    })
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-decimal-trip-'))
    roots.push(root)
    const table = await DeltaTable.create(join(root, 't'), { schema: SCHEMA })
    const arrowCopy = await DeltaTable.create(join(root, 'arrow'), { schema: SCHEMA })
    try {
      const header = ['id', ...TYPES.map((t) => t.column)]
      const csv = join(root, 'in.csv')
      await writeFile(
        csv,
        `${header.join(',')}\n${rows.map((r, i) => [i, ...r.map((v) => v.csv)].join(',')).join('\n')}\n`,
      )
      const jsonl = join(root, 'in.jsonl')
      await writeFile(
        jsonl,
        `${rows.map((r, i) => `{"id":${COUNT + i},${r.map((v, c) => `"${TYPES[c]?.column}":${v.json}`).join(',')}}`).join('\n')}\n`,
      )
      // The Parquet file declares the decimal types; DuckDB casts plain digits exactly.
      const parquet = join(root, 'in.parquet')
      const plain = join(root, 'plain.csv')
      await writeFile(
        plain,
        `${header.join(',')}\n${rows.map((r, i) => [2 * COUNT + i, ...r.map((v) => v.canonical)].join(',')).join('\n')}\n`,
      )
      const instance = await DuckDBInstance.create(':memory:')
      const con = await instance.connect()
      try {
        const casts = TYPES.map(
          (t) => `CAST(${t.column} AS DECIMAL(${t.precision},${t.scale})) AS ${t.column}`,
        )
        await con.run(
          `COPY (SELECT CAST(id AS BIGINT) AS id, ${casts.join(', ')} FROM read_csv('${plain}', header = true, all_varchar = true)) TO '${parquet}' (FORMAT parquet)`,
        )
      } finally {
        con.closeSync()
        instance.closeSync()
      }
      await table.appendFile(csv)
      await table.appendFile(jsonl)
      await table.appendFile(parquet)
      await table.append(
        rows.map((r, i) => ({
          id: BigInt(3 * COUNT + i),
          ...Object.fromEntries(r.map((v, c) => [TYPES[c]?.column, v.csv])),
        })),
      )
      // Arrow: the JS objects' rows, out as an Arrow table and in again.
      await arrowCopy.append(await table.scan({ where: `id >= ${3 * COUNT}` }).toArrow())

      const got = [...(await table.scan().toArray()), ...(await arrowCopy.scan().toArray())]
      assert.equal(got.length, 5 * COUNT)
      const sources = ['CSV', 'JSON lines', 'Parquet', 'JS objects', 'Arrow']
      const seen = new Set<string>()
      for (const [n, row] of got.entries()) {
        const id = Number(row.id)
        const source = n >= 4 * COUNT ? 'Arrow' : (sources[Math.floor(id / COUNT)] as string)
        seen.add(source)
        const expected = rows[id % COUNT] as readonly Value[]
        for (const [c, t] of TYPES.entries()) {
          const v = expected[c] as Value
          assert.equal(
            row[t.column],
            v.canonical,
            `${source}, row ${id % COUNT}, ${t.column} decimal(${t.precision},${t.scale}): written as '${source === 'JSON lines' ? v.json : v.csv}' (seed ${seed})`,
          )
        }
      }
      assert.deepEqual([...seen].sort(), [...sources].sort())
    } finally {
      await table.close()
      await arrowCopy.close()
    }
  })
})
