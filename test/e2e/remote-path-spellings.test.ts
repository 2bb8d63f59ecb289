/**
 * Absolute data file paths in a log, spelled the way Spark and delta-rs write them on object
 * stores: `abfss://<container>@<account>.dfs.core.windows.net/...` and `wasbs://...blob...` for a
 * table opened as `az://<container>/...`, `s3a://` and `s3n://` for one opened as `s3://`. Real
 * tables on Azurite and s3rver: the engine writes them, the test commits by hand actions that name
 * their files in those spellings, and the rows read (through the table's own location and through
 * the Spark spelling of it) must be the rows of the relative paths; a later remove in yet another
 * spelling removes the file, and the engine rewrites a file it knows only by its absolute path.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { parseCommitFile, serializeCommit } from '../../src/protocol/action-json.js'
import type { Action, AddFile } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import type { ObjectStore } from '../../src/storage/index.js'
import { DeltaTable, type OpenOptions } from '../../src/table/delta-table.js'
import { azuriteBackend, type RemoteBackend, s3rverBackend } from '../helpers/remote-backends.js'
import { AZURITE_ACCOUNT } from '../helpers/servers.js'

/** A backend, and the Spark spellings of its locations. */
interface Case {
  readonly backend: RemoteBackend
  /** The table's location as Spark names it (the location opens too). */
  readonly sparkLocation: (location: string) => string
  /** Spellings of one file of the table at `location`, other than the relative path. */
  readonly spellings: (location: string, path: string) => readonly string[]
}

const azureParts = (location: string) => {
  const m = /^az:\/\/([^/]+)\/(.+)$/.exec(location)
  if (m === null) throw new Error(`not an az:// location: ${location}`)
  return { container: m[1] as string, prefix: m[2] as string }
}

const CASES: readonly Case[] = [
  {
    backend: azuriteBackend(),
    sparkLocation(location) {
      const { container, prefix } = azureParts(location)
      return `abfss://${container}@${AZURITE_ACCOUNT}.dfs.core.windows.net/${prefix}`
    },
    spellings(location, path) {
      const { container, prefix } = azureParts(location)
      return [
        `abfss://${container}@${AZURITE_ACCOUNT}.dfs.core.windows.net/${prefix}/${path}`,
        `wasbs://${container}@${AZURITE_ACCOUNT}.blob.core.windows.net/${prefix}/${path}`,
        `abfs://${container}@${AZURITE_ACCOUNT}.dfs.core.windows.net/${prefix}/${path}`,
        `${location}/${path}`,
      ]
    },
  },
  {
    backend: s3rverBackend(),
    sparkLocation: (location) => location.replace(/^s3:/, 's3a:'),
    spellings: (location, path) => [
      `${location.replace(/^s3:/, 's3a:')}/${path}`,
      `${location.replace(/^s3:/, 's3n:')}/${path}`,
      `${location}/${path}`,
    ],
  },
]

async function addsOf(store: ObjectStore, version: bigint): Promise<AddFile[]> {
  const key = `${LOG_DIR}${commitFileName(version)}`
  const actions = parseCommitFile(new TextDecoder().decode(await store.read(key)), { path: key, version })
  return actions.flatMap((a) => ('add' in a ? [a.add] : []))
}

async function commit(store: ObjectStore, version: bigint, actions: Action[]): Promise<void> {
  const info: Action = {
    commitInfo: { timestamp: BigInt(Date.now()), operation: 'MANUAL', txnId: randomUUID() },
  }
  const bytes = new TextEncoder().encode(serializeCommit([info, ...actions]))
  await store.put(`${LOG_DIR}${commitFileName(version)}`, bytes, { ifNotExists: true })
}

const removeOf = (path: string, add: AddFile): Action => ({
  remove: { path, deletionTimestamp: BigInt(Date.now()), dataChange: true, size: add.size },
})

async function ids(location: string, options: OpenOptions): Promise<number[]> {
  const table = await DeltaTable.open(location, options)
  try {
    const rows = await table.scan().toArray()
    return rows.map((r) => Number(r.id as bigint)).sort((a, b) => a - b)
  } finally {
    await table.close()
  }
}

for (const c of CASES) {
  describe(`absolute log paths as Spark spells them: ${c.backend.name}`, () => {
    before(() => c.backend.start())
    after(() => c.backend.stop())

    it('every spelling of a file reads the rows of its relative path, and a remove in another spelling removes it', async () => {
      const loc = c.backend.fresh('spell')
      const table = await DeltaTable.create(
        loc.location,
        { schema: 'id long not null, p int', partitionBy: ['p'] },
        loc.openOptions,
      )
      await table.append([0, 1, 2, 3, 4].map((i) => ({ id: BigInt(i), p: 1 })))
      await table.append([5, 6, 7, 8, 9].map((i) => ({ id: BigInt(i), p: 2 })))
      await table.close()
      const first = (await addsOf(loc.store, 1n))[0] as AddFile
      const second = (await addsOf(loc.store, 2n))[0] as AddFile
      const all = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
      const [spellA, spellB, spellC] = c.spellings(loc.location, first.path)
      const secondAbs = c.spellings(loc.location, second.path)[1] as string

      // Both files re-added under absolute paths, as a shallow clone or a Spark rewrite names them.
      await commit(loc.store, 3n, [
        removeOf(first.path, first),
        { add: { ...first, path: spellA as string, dataChange: false } },
        removeOf(second.path, second),
        { add: { ...second, path: secondAbs, dataChange: false } },
      ])
      const sparkLocation = c.sparkLocation(loc.location)
      assert.deepEqual(await ids(loc.location, loc.openOptions), all)
      assert.deepEqual(await ids(sparkLocation, loc.openOptions), all)

      // A remove in another spelling (and an add in a third) is one file, not two.
      await commit(loc.store, 4n, [
        removeOf(spellB as string, first),
        { add: { ...first, path: spellC as string, dataChange: false } },
      ])
      assert.deepEqual(await ids(loc.location, loc.openOptions), all)
      await commit(loc.store, 5n, [removeOf(first.path, first)])
      assert.deepEqual(await ids(loc.location, loc.openOptions), [5, 6, 7, 8, 9])
      assert.deepEqual(await ids(sparkLocation, loc.openOptions), [5, 6, 7, 8, 9])

      // The engine rewrites a file it knows only by an absolute path, and its remove names it.
      const writer = await DeltaTable.open(sparkLocation, loc.openOptions)
      try {
        await writer.delete('id = 7')
      } finally {
        await writer.close()
      }
      assert.deepEqual(await ids(loc.location, loc.openOptions), [5, 6, 8, 9])
    })
  })
}
