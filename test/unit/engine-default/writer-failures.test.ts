import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { WrittenFile } from '../../../src/engine/data-writer.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { DuckDbWriter } from '../../../src/engine-default/duckdb-writer.js'
import { InvalidArgumentError, StorageError, UnsupportedError } from '../../../src/errors/index.js'
import { createFaultyStore, createLocalStore } from '../../../src/storage/index.js'
import { listKeys, schemaOf, targetOf } from './writer-helpers.js'

const schema = schemaOf({ name: 'id', type: 'long' }, { name: 'p', type: 'integer' })
const target = targetOf(schema, { partitionColumns: ['p'] })
const rows = [0, 1, 2, 3, 4, 5].map((i) => ({ id: BigInt(i), p: i % 3 }))

describe('writer failures', () => {
  let dir: string
  let duck: DuckDbRuntime
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-writer-fail-'))
    duck = new DuckDbRuntime({ threads: 1 })
  })
  after(async () => {
    await duck.close()
    await rm(dir, { recursive: true, force: true })
  })

  async function scratchEntries(scratch: string): Promise<string[]> {
    return readdir(scratch).catch(() => [])
  }

  it('a failed upload removes the files already stored and every scratch file', async () => {
    const inner = createLocalStore(join(dir, 'upload'))
    const store = createFaultyStore(inner, { faults: [{ methods: 'put', nth: 2 }] })
    const scratch = join(dir, 'scratch-upload')
    const writer = new DuckDbWriter(store, duck, scratch)
    await assert.rejects(writer.writeRows({ rows, target }), StorageError)
    assert.deepStrictEqual(await listKeys(inner), [])
    assert.deepStrictEqual(await scratchEntries(scratch), [])
  })

  it('a successful write leaves no scratch files', async () => {
    const store = createLocalStore(join(dir, 'ok'))
    const scratch = join(dir, 'scratch-ok')
    const writer = new DuckDbWriter(store, duck, scratch)
    const files = await writer.writeRows({ rows, target })
    assert.equal(files.length, 3)
    const [out] = await writer.compact({ bins: [[files[0] as WrittenFile]], target })
    assert.ok(out?.file)
    assert.deepStrictEqual(await scratchEntries(scratch), [])
  })

  it('an aborted signal stops the write before anything is stored', async () => {
    const store = createLocalStore(join(dir, 'abort'))
    const writer = new DuckDbWriter(store, duck, join(dir, 'scratch-abort'))
    const controller = new AbortController()
    controller.abort()
    await assert.rejects(writer.writeRows({ rows, target, signal: controller.signal }), {
      name: 'AbortError',
    })
    assert.deepStrictEqual(await listKeys(store), [])
  })

  const targets: [
    string,
    () => Parameters<DuckDbWriter['writeRows']>[0]['target'],
    typeof InvalidArgumentError | typeof UnsupportedError,
  ][] = [
    [
      'an unknown partition column',
      () => targetOf(schema, { partitionColumns: ['nope'] }),
      InvalidArgumentError,
    ],
    [
      'every column a partition column',
      () => targetOf(schema, { partitionColumns: ['id', 'p'] }),
      InvalidArgumentError,
    ],
    [
      'a complex partition column',
      () =>
        targetOf(
          schemaOf(
            { name: 'id', type: 'long' },
            { name: 'a', type: { type: 'array', elementType: 'long', containsNull: true } },
          ),
          { partitionColumns: ['a'] },
        ),
      InvalidArgumentError,
    ],
    ['a non-positive target size', () => targetOf(schema, { targetFileSize: 0 }), InvalidArgumentError],
    [
      'a path prefix without a trailing slash',
      () => targetOf(schema, { pathPrefix: 'data' }),
      InvalidArgumentError,
    ],
    ['a path prefix that climbs out', () => targetOf(schema, { pathPrefix: '../x/' }), InvalidArgumentError],
    [
      'a variant column',
      () => targetOf(schemaOf({ name: 'id', type: 'long' }, { name: 'v', type: 'variant' })),
      UnsupportedError,
    ],
  ]
  for (const [name, make, type] of targets) {
    it(`refuses a target with ${name}`, async () => {
      const writer = new DuckDbWriter(
        createLocalStore(join(dir, 'targets')),
        duck,
        join(dir, 'scratch-targets'),
      )
      await assert.rejects(writer.writeRows({ rows: [{ id: 1n }], target: make() }), type)
    })
  }

  it('puts files under the path prefix, before the partition directory', async () => {
    const store = createLocalStore(join(dir, 'prefix'))
    const writer = new DuckDbWriter(store, duck, join(dir, 'scratch-prefix'))
    const files = await writer.writeRows({ rows, target: { ...target, pathPrefix: 'ab/cd/' } })
    for (const f of files) assert.match(f.key, /^ab\/cd\/p=\d\/part-/)
    assert.deepStrictEqual(await listKeys(store), files.map((f) => f.key).sort())
  })
})
