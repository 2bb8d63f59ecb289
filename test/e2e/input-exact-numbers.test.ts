/**
 * Numbers from CSV and JSON input are stored exactly or refused: a decimal never passes through a
 * double, a value with more digits than its decimal column keeps is refused as the table API
 * refuses it, a fraction in an integer column is refused, the int64 extremes stay exact, and an
 * unterminated quote is an error naming its line. Messages name the line, row, column, value and
 * the column's Delta type, never a DuckDB type.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function table(schema: string): Promise<{ root: string; table: DeltaTable }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-exact-'))
  roots.push(root)
  return { root, table: await DeltaTable.create(join(root, 't'), { schema }) }
}

/** The refusal of appending `file`, after checking that nothing was committed or left behind. */
async function refusal(t: DeltaTable, root: string, file: string): Promise<string> {
  let message = ''
  await assert.rejects(t.appendFile(file), (err: unknown) => {
    assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
    message = (err as Error).message
    return true
  })
  assert.equal((await t.history()).length, 1, 'nothing committed')
  assert.deepEqual(
    (await readdir(join(root, 't'))).filter((f) => f.endsWith('.parquet')),
    [],
  )
  assert.doesNotMatch(message, /DOUBLE|BIGINT|INT64|HUGEINT|DECIMAL\(/, message)
  return message
}

/** Rows of the large inputs, whose last row holds the bad value (the CLI reads 1,000,000 in cli-input-failures). */
const BIG_ROWS = 200_000

const DECIMALS = 'id long, a decimal(18,2), b decimal(38,18), c decimal(38,18)'
const EXACT = {
  a: '1234567890123456.78',
  b: '12345678901234567890.123456789012345678',
  c: '1.000000000000000001',
}

describe('numbers from input files are stored exactly', () => {
  for (const format of ['csv', 'jsonl'] as const) {
    it(`${format}: decimals of 18 and 38 digits keep every digit`, async () => {
      const { root, table: t } = await table(DECIMALS)
      try {
        const file = join(root, `in.${format}`)
        await writeFile(
          file,
          format === 'csv'
            ? `id,a,b,c\n1,${EXACT.a},${EXACT.b},${EXACT.c}\n2,-0.01,-1e-18,.5\n`
            : `{"id":1,"a":${EXACT.a},"b":${EXACT.b},"c":${EXACT.c}}\n{"id":2,"a":-0.01,"b":-1e-18,"c":0.5}\n`,
        )
        await t.appendFile(file)
        const rows = (await t.scan().toArray()).sort((x, y) => Number(x.id) - Number(y.id))
        assert.deepEqual(rows, [
          { id: 1n, ...EXACT },
          { id: 2n, a: '-0.01', b: '-0.000000000000000001', c: '0.500000000000000000' },
        ])
      } finally {
        await t.close()
      }
    })

    it(`${format}: the int64 extremes stay exact; one past them is refused`, async () => {
      const { root, table: t } = await table('id integer, n long')
      try {
        const file = join(root, `in.${format}`)
        const lines =
          format === 'csv'
            ? ['id,n', '1,-9223372036854775808', '2,9223372036854775807', '3,9007199254740993', '4,1e3']
            : [
                '{"id":1,"n":-9223372036854775808}',
                '{"id":2,"n":9223372036854775807}',
                '{"id":3,"n":9007199254740993}',
                '{"id":4,"n":1e3}',
              ]
        await writeFile(file, `${lines.join('\n')}\n`)
        await t.appendFile(file)
        const rows = (await t.scan().toArray()).sort((x, y) => Number(x.id) - Number(y.id))
        assert.deepEqual(
          rows.map((r) => r.n),
          [-9223372036854775808n, 9223372036854775807n, 9007199254740993n, 1000n],
        )
        const over = join(root, `over.${format}`)
        await writeFile(
          over,
          format === 'csv'
            ? 'id,n\n1,5\n2,9223372036854775808\n'
            : '{"id":1,"n":5}\n{"id":2,"n":9223372036854775808}\n',
        )
        await assert.rejects(t.appendFile(over), (err: unknown) => {
          assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
          assert.match(
            (err as Error).message,
            /row 2\), column 'n': '9223372036854775808' is out of the range of a long column \(-9223372036854775808 to 9223372036854775807\)$/,
          )
          return true
        })
      } finally {
        await t.close()
      }
    })

    it(`${format}: a value its decimal column would round is refused, naming line, row, column, value and type`, async () => {
      const { root, table: t } = await table('id long, price decimal(12,2)')
      try {
        // The library API refuses the same value.
        await assert.rejects(t.append([{ id: 1n, price: '1.005' }]), (err: unknown) =>
          isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
        )
        const file = join(root, `in.${format}`)
        await writeFile(
          file,
          format === 'csv'
            ? 'id,price\n1,1.50\n2,1.005\n'
            : '{"id":1,"price":1.50}\n{"id":2,"price":1.005}\n',
        )
        const line = format === 'csv' ? 3 : 2
        assert.equal(
          await refusal(t, root, file),
          `The input cannot be read at file ${file}, line ${line} (row 2), column 'price': '1.005' has more digits after the point (3) than a decimal(12,2) column keeps (2): it would be rounded`,
        )
        await writeFile(
          file,
          format === 'csv' ? 'id,price\n1,12345678901.5\n' : '{"id":1,"price":12345678901.5}\n',
        )
        assert.match(
          await refusal(t, root, file),
          /column 'price': '12345678901.5' has more digits before the point \(11\) than a decimal\(12,2\) column holds \(10\)$/,
        )
      } finally {
        await t.close()
      }
    })

    it(`${format}: a fraction in an integer column is refused`, async () => {
      const { root, table: t } = await table('id long, n long')
      try {
        const file = join(root, `in.${format}`)
        await writeFile(
          file,
          format === 'csv' ? 'id,n\n1,12\n2,12.5\n' : '{"id":1,"n":12}\n{"id":2,"n":12.5}\n',
        )
        assert.match(
          await refusal(t, root, file),
          /\(row 2\), column 'n': '12.5' has a fraction, and a long column holds whole numbers only: it would be rounded$/,
        )
      } finally {
        await t.close()
      }
    })
  }

  it('a value that is not a number names the Delta type', async () => {
    const { root, table: t } = await table('id long, x double, d decimal(9,0)')
    try {
      const file = join(root, 'in.csv')
      const rows = ['id,x,d']
      for (let i = 1; i <= 30_000; i++) rows.push(`${i},${i}.5,${i}`)
      rows.push('30001,abc,1')
      await writeFile(file, `${rows.join('\n')}\n`)
      assert.equal(
        await refusal(t, root, file),
        `The input cannot be read at file ${file}, line 30002 (row 30001), column 'x': 'abc' is not a double`,
      )
    } finally {
      await t.close()
    }
  })

  it('an unterminated quote is an error naming its line', async () => {
    const { root, table: t } = await table('id long, name string')
    try {
      for (const at of [3, 50_500]) {
        const file = join(root, `quote-${at}.csv`)
        const rows = ['id,name']
        for (let i = 1; i <= Math.max(at + 10, 20); i++)
          rows.push(i === at ? `${i},"name${i}` : `${i},name${i}`)
        await writeFile(file, `${rows.join('\n')}\n`)
        assert.equal(
          await refusal(t, root, file),
          `The input cannot be read at file ${file}, line ${at + 1} (row ${at}): a value opens a double quote that is never closed`,
        )
      }
      // Quotes that are closed, and a quote inside an unquoted field, are read as before.
      const file = join(root, 'good.csv')
      await writeFile(file, 'id,name\n1,"a, b"\n2,x"y\n3,"say ""hi"""\n')
      await t.appendFile(file)
      const rows = (await t.scan().toArray()).sort((x, y) => Number(x.id) - Number(y.id))
      assert.deepEqual(
        rows.map((r) => r.name),
        ['a, b', 'x"y', 'say "hi"'],
      )
    } finally {
      await t.close()
    }
  })

  it(`a ${BIG_ROWS.toLocaleString('en')}-row CSV and JSON lines input whose last row a decimal column would round is refused, naming that row`, async () => {
    const { root, table: t } = await table('id long, amount decimal(18,2)')
    try {
      const csv = join(root, 'big.csv')
      const jsonl = join(root, 'big.jsonl')
      const instance = await DuckDBInstance.create(':memory:')
      const con = await instance.connect()
      try {
        const rows = `SELECT i AS id, CAST(i / 100 AS DECIMAL(18,2)) AS amount FROM range(1, ${BIG_ROWS}) t(i)`
        await con.run(`COPY (${rows}) TO '${csv}' (HEADER)`)
        await con.run(`COPY (${rows}) TO '${jsonl}' (FORMAT json)`)
      } finally {
        con.closeSync()
        instance.closeSync()
      }
      await writeFile(csv, `${BIG_ROWS},1.005\n`, { flag: 'a' })
      await writeFile(jsonl, `{"id":${BIG_ROWS},"amount":1.005}\n`, { flag: 'a' })
      for (const [file, line] of [
        [csv, BIG_ROWS + 1],
        [jsonl, BIG_ROWS],
      ] as const) {
        assert.equal(
          await refusal(t, root, file),
          `The input cannot be read at file ${file}, line ${line} (row ${BIG_ROWS}), column 'amount': '1.005' has more digits after the point (3) than a decimal(18,2) column keeps (2): it would be rounded`,
        )
      }
    } finally {
      await t.close()
    }
  })
})
