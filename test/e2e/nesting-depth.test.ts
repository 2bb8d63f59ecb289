/**
 * Nested types: 40 levels append and scan in well under a second each, and the documented limit
 * of 64 levels (struct, array and map each count one) is enforced at create and at append, for
 * the schema and for the values, with DELTA_INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { MAX_TYPE_DEPTH, parseDdlSchema, serializeSchema } from '../../src/protocol/schema.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

let root: string
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-nesting-'))
})
after(() => rm(root, { recursive: true, force: true }))

/** `struct<a: ...>` nested `depth` times around an int, every `listEvery`-th level an array. */
function nested(depth: number, listEvery = 0): { ddl: string; value: unknown } {
  let ddl = 'int'
  let value: unknown = 7
  for (let i = 0; i < depth; i++) {
    if (listEvery > 0 && i % listEvery === 0) {
      ddl = `array<${ddl}>`
      value = [value]
    } else {
      ddl = `struct<a: ${ddl}>`
      value = { a: value }
    }
  }
  return { ddl, value }
}

function isDepthError(err: unknown): boolean {
  assert.ok(err instanceof InvalidArgumentError, String(err))
  assert.match(err.message, /64 levels deep/)
  return true
}

describe('nested types', () => {
  assert.equal(MAX_TYPE_DEPTH, 64)

  for (const [name, listEvery] of [
    ['structs', 0],
    ['structs with an array every 4th level', 4],
  ] as const) {
    it(`40 levels of ${name} create, append and scan back fast`, async (t) => {
      const { ddl, value } = nested(40, listEvery)
      const started = Date.now()
      const table = await DeltaTable.create(join(root, `d40-${listEvery}`), { schema: `id long, s ${ddl}` })
      try {
        await table.append([{ id: 1n, s: value }])
        const rows = await table.scan().toArray()
        assert.deepEqual(rows, [{ id: 1n, s: value }])
        const ms = Date.now() - started
        t.diagnostic(`depth 40 (${name}): create + append + scan ${ms} ms`)
        assert.ok(ms < 20_000, `took ${ms} ms`)
      } finally {
        await table.close()
      }
    })
  }

  it('a 64-level schema is accepted and a 65-level one refused at create, as DDL and as an object', async () => {
    await (await DeltaTable.create(join(root, 'd64'), { schema: `s ${nested(64).ddl}` })).close()
    const deep = nested(65).ddl
    const dir = join(root, 'd65')
    await assert.rejects(() => DeltaTable.create(dir, { schema: `s ${deep}` }), isDepthError)
    // The same schema as an object (built from a 64-level one wrapped once more).
    const inner = JSON.parse(serializeSchema(parseDdlSchema(`s ${nested(64).ddl}`))) as {
      fields: { type: unknown }[]
    }
    const asObject = {
      type: 'struct',
      fields: [
        {
          name: 's',
          type: {
            type: 'struct',
            fields: [{ name: 'a', type: inner.fields[0]?.type, nullable: true, metadata: {} }],
          },
          nullable: true,
          metadata: {},
        },
      ],
    }
    await assert.rejects(() => DeltaTable.create(dir, { schema: asObject }), isDepthError)
    await assert.rejects(() => readdir(dir), { code: 'ENOENT' })
  })

  it('a value nested 65 levels is refused at append, before anything is written', async () => {
    const dir = join(root, 'v65')
    const table = await DeltaTable.create(dir, { schema: `id long, s ${nested(3).ddl}` })
    try {
      await assert.rejects(() => table.append([{ id: 1n, s: nested(65).value }]), isDepthError)
      let deep: unknown = 1
      for (let i = 0; i < 100_000; i++) deep = [deep]
      await assert.rejects(() => table.append([{ id: 2n, s: { a: deep } }]), isDepthError)
      assert.equal((await table.snapshot()).version, 0n)
      assert.deepEqual(
        (await readdir(dir)).filter((f) => f.endsWith('.parquet')),
        [],
      )
    } finally {
      await table.close()
    }
  })

  it('a table whose schema another engine nested 65 levels deep opens, but append is refused', async () => {
    const dir = join(root, 'foreign65')
    const table = await DeltaTable.create(dir, { schema: `id long, s ${nested(64).ddl}` })
    await table.close()
    // Version 1: version 0's metaData action, its schema wrapping the 64-level column once more.
    const log0 = await readFile(join(dir, '_delta_log', '00000000000000000000.json'), 'utf8')
    const line = log0.split('\n').find((l) => l.startsWith('{"metaData"')) as string
    const action = JSON.parse(line) as { metaData: { schemaString: string } }
    const schema = JSON.parse(action.metaData.schemaString) as { fields: { type: unknown }[] }
    const s = schema.fields[1] as { type: unknown }
    s.type = { type: 'struct', fields: [{ name: 'a', type: s.type, nullable: true, metadata: {} }] }
    action.metaData.schemaString = JSON.stringify(schema)
    await writeFile(join(dir, '_delta_log', '00000000000000000001.json'), `${JSON.stringify(action)}\n`, {
      flag: 'wx',
    })
    const reopened = await DeltaTable.open(dir)
    try {
      assert.equal((await reopened.snapshot()).version, 1n)
      await assert.rejects(() => reopened.append([{ id: 1n, s: null }]), isDepthError)
    } finally {
      await reopened.close()
    }
  })

  it("the CLI's --help states the nesting and value size limits", async () => {
    const help = await runCliInProcess(['--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, new RegExp(`nest at most ${MAX_TYPE_DEPTH} levels`))
    assert.match(help.stdout, /at most 256 MiB/)
  })
})
