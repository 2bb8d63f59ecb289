/**
 * Configuration of the Azure and S3 stores: location forms, where credentials, endpoints and
 * regions come from (options before environment variables), openStore's mapping of remote
 * locations, paged listings, and the S3 switch that refuses put-if-absent on services that cannot
 * honour it. Resolution is checked by talking to real local servers, not by inspecting internals.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobServiceClient,
  generateAccountSASQueryParameters,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { InvalidArgumentError, StorageError, UnsupportedError } from '../../src/errors/index.js'
import {
  createAzureStore,
  createS3Store,
  type FileMeta,
  type ObjectStore,
  openStore,
  parseAzureLocation,
  parseS3Location,
  type S3StoreOptions,
} from '../../src/storage/index.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  createS3Bucket,
  S3RVER_CREDENTIALS,
  startAzurite,
  startS3rver,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

let azurite: TestServer
let s3rver: TestServer

before(async () => {
  ;[azurite, s3rver] = await Promise.all([startAzurite(), startS3rver()])
})
after(async () => {
  await azurite?.stop()
  await s3rver?.stop()
})

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)
const FAST = { maxRetries: 1, baseDelayMs: 5 }

async function keys(items: AsyncIterable<FileMeta>): Promise<string[]> {
  const out: string[] = []
  for await (const item of items) out.push(item.key)
  return out
}

/** Writes through one store and reads back through a second one opened on the same root. */
async function assertRoundTrip(writer: ObjectStore, reader: ObjectStore = writer): Promise<void> {
  const key = `rt/${uniqueName('k')}.json`
  await writer.put(key, enc('round trip'), { ifNotExists: true })
  assert.equal(dec(await reader.read(key)), 'round trip')
}

function sasToken(key: string): string {
  return generateAccountSASQueryParameters(
    {
      permissions: AccountSASPermissions.parse('rwdlac'),
      services: AccountSASServices.parse('b').toString(),
      resourceTypes: AccountSASResourceTypes.parse('sco').toString(),
      expiresOn: new Date(Date.now() + 3600_000),
    },
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, key),
  ).toString()
}

describe('Azure locations', () => {
  const valid: [
    string,
    { container: string; prefix: string; account?: string; endpoint?: string; sas?: string; root: string },
  ][] = [
    ['az://tables/sales', { container: 'tables', prefix: 'sales', root: 'az://tables/sales' }],
    ['az://tables/a/b/', { container: 'tables', prefix: 'a/b', root: 'az://tables/a/b' }],
    ['az://tables', { container: 'tables', prefix: '', root: 'az://tables' }],
    [
      'abfss://tables@acme.dfs.core.windows.net/lake/sales',
      {
        container: 'tables',
        prefix: 'lake/sales',
        account: 'acme',
        endpoint: 'https://acme.blob.core.windows.net',
        root: 'abfss://tables@acme.dfs.core.windows.net/lake/sales',
      },
    ],
    [
      'https://acme.blob.core.windows.net/tables/my%20table?sv=2024&sig=c2VjcmV0',
      {
        container: 'tables',
        prefix: 'my table',
        account: 'acme',
        endpoint: 'https://acme.blob.core.windows.net',
        sas: 'sv=2024&sig=c2VjcmV0',
        root: 'https://acme.blob.core.windows.net/tables/my%20table',
      },
    ],
  ]
  for (const [location, expected] of valid) {
    it(`parses ${location}`, () => {
      const parsed = parseAzureLocation(location)
      assert.equal(parsed.container, expected.container)
      assert.equal(parsed.prefix, expected.prefix)
      assert.equal(parsed.account, expected.account)
      assert.equal(parsed.endpoint, expected.endpoint)
      assert.equal(parsed.sasToken, expected.sas)
      assert.equal(parsed.display, expected.root)
    })
  }

  it('rejects malformed locations without echoing a SAS signature', () => {
    for (const location of [
      'az://',
      'az://tables/a/../b',
      'az://tables/a//b',
      'abfss://tables@not-an-azure-host/x',
      'https://acme.blob.core.windows.net',
      'https://example.com/tables/x?sig=topsecretsig',
    ]) {
      assert.throws(
        () => parseAzureLocation(location),
        (err: unknown) => {
          assert.ok(err instanceof InvalidArgumentError, location)
          assert.ok(!err.message.includes('topsecretsig'), err.message)
          return true
        },
      )
    }
  })

  it('refuses to guess credentials and names the settings that supply them', () => {
    assert.throws(
      () => createAzureStore('az://tables/x', { env: {} }),
      (err: unknown) =>
        err instanceof InvalidArgumentError &&
        /AZURE_STORAGE_CONNECTION_STRING/.test(err.message) &&
        /AZURE_STORAGE_SAS_TOKEN/.test(err.message),
    )
    assert.throws(
      () => createAzureStore('az://tables/x', { accountKey: AZURITE_KEY, env: {} }),
      (err: unknown) => err instanceof InvalidArgumentError && /AZURE_STORAGE_ACCOUNT/.test(err.message),
    )
    assert.throws(
      () =>
        createAzureStore('abfss://t@acme.dfs.core.windows.net/x', {
          account: 'other',
          accountKey: AZURITE_KEY,
        }),
      InvalidArgumentError,
    )
  })

  it('rejects a malformed connection string without quoting it', () => {
    for (const connectionString of [
      'AccountName=a;AccountKeyIsMissingItsValue-s3cr3t',
      'AccountName=a;BlobEndpoint=http://x',
    ]) {
      assert.throws(
        () => createAzureStore('az://tables/x', { connectionString, env: {} }),
        (err: unknown) =>
          err instanceof InvalidArgumentError &&
          !err.message.includes('s3cr3t') &&
          !err.message.includes('http://x'),
      )
    }
  })

  it('builds the default endpoint from the account, with no network call', () => {
    const store = createAzureStore('az://tables/sales', { account: 'acme', accountKey: AZURITE_KEY, env: {} })
    assert.equal(store.root, 'az://tables/sales')
    assert.equal(store.localPath, undefined)
  })
})

describe('Azure credentials and endpoints against Azurite', () => {
  let server: TestServer
  const container = 'config'

  before(async () => {
    server = azurite
    await createAzureContainer(server.endpoint, container)
  })

  it('reads a connection string from AZURE_STORAGE_CONNECTION_STRING', async () => {
    const location = `az://${container}/${uniqueName('t')}`
    const env = {
      AZURE_STORAGE_CONNECTION_STRING: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${server.endpoint};`,
    }
    await assertRoundTrip(createAzureStore(location, { env, retry: FAST }))
  })

  it('reads the account and key from AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY', async () => {
    const env = { AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_KEY: AZURITE_KEY }
    await assertRoundTrip(
      createAzureStore(`az://${container}/${uniqueName('t')}`, {
        endpoint: server.endpoint,
        env,
        retry: FAST,
      }),
    )
  })

  it('reads a SAS token from AZURE_STORAGE_SAS_TOKEN and from the sasToken option', async () => {
    const location = `az://${container}/${uniqueName('t')}`
    const fromEnv = createAzureStore(location, {
      endpoint: server.endpoint,
      env: { AZURE_STORAGE_SAS_TOKEN: `?${sasToken(AZURITE_KEY)}` },
      retry: FAST,
    })
    const fromOption = createAzureStore(location, {
      endpoint: server.endpoint,
      sasToken: sasToken(AZURITE_KEY),
      env: {},
    })
    await assertRoundTrip(fromEnv, fromOption)
  })

  it('rejects a SAS signed with the wrong key, without showing its signature', async () => {
    const token = sasToken(Buffer.alloc(64, 9).toString('base64'))
    const signature = decodeURIComponent(/sig=([^&]+)/.exec(token)![1]!)
    const store = createAzureStore(`az://${container}/x`, {
      endpoint: server.endpoint,
      sasToken: token,
      env: {},
      retry: FAST,
    })
    await assert.rejects(store.read('k'), (err: unknown) => {
      assert.ok(err instanceof StorageError && /rejected the credentials/.test(err.message), String(err))
      assert.ok(!JSON.stringify({ m: err.message, c: err.cause }).includes(signature))
      return true
    })
  })

  it('lets options win over environment variables', async () => {
    const goodEnv = {
      AZURE_STORAGE_CONNECTION_STRING: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${server.endpoint};`,
    }
    const store = createAzureStore(`az://${container}/x`, {
      account: AZURITE_ACCOUNT,
      accountKey: Buffer.alloc(64, 3).toString('base64'),
      endpoint: server.endpoint,
      env: goodEnv,
      retry: FAST,
    })
    await assert.rejects(
      store.read('k'),
      (err: unknown) => err instanceof StorageError && /credentials/.test(err.message),
    )
  })

  it('lists neither the directory placeholders of hierarchical accounts nor names no key can address', async () => {
    const prefix = uniqueName('t')
    const raw = new BlobServiceClient(
      server.endpoint,
      new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
    )
    const blobs = raw.getContainerClient(container)
    await blobs
      .getBlockBlobClient(`${prefix}/d/_delta_log`)
      .upload('', 0, { metadata: { hdi_isfolder: 'true' } })
    await blobs.getBlockBlobClient(`${prefix}/d/marker/`).upload('', 0)
    await blobs.getBlockBlobClient(`${prefix}/d/a//b`).upload('x', 1)
    await blobs.getBlockBlobClient(`${prefix}/d/part-0.parquet`).upload('x', 1)
    const store = createAzureStore(`az://${container}/${prefix}`, {
      endpoint: server.endpoint,
      account: AZURITE_ACCOUNT,
      accountKey: AZURITE_KEY,
      env: {},
    })
    assert.deepEqual(await keys(store.listFrom('d/')), ['d/part-0.parquet'])
    assert.deepEqual(await keys(store.listRecursive('')), ['d/part-0.parquet'])
  })

  it('opens az:// locations through openStore with backend options', async () => {
    const location = `az://${container}/${uniqueName('t')}`
    const options = {
      azure: { endpoint: server.endpoint, account: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, env: {} },
    }
    const store = openStore(location, options)
    assert.equal(store.root, location)
    await assertRoundTrip(store, openStore(location, options))
  })
})

describe('S3 locations', () => {
  const valid: [string, { bucket: string; prefix: string; root: string }][] = [
    ['s3://lake/sales', { bucket: 'lake', prefix: 'sales', root: 's3://lake/sales' }],
    ['s3a://lake/a/b/', { bucket: 'lake', prefix: 'a/b', root: 's3://lake/a/b' }],
    ['s3://lake', { bucket: 'lake', prefix: '', root: 's3://lake' }],
  ]
  for (const [location, expected] of valid) {
    it(`parses ${location}`, () => {
      const parsed = parseS3Location(location)
      assert.equal(parsed.bucket, expected.bucket)
      assert.equal(parsed.prefix, expected.prefix)
      assert.equal(parsed.display, expected.root)
    })
  }

  it('rejects malformed locations and options', () => {
    for (const location of ['s3://', 's3://lake/a/../b', 'gs://lake/x']) {
      assert.throws(() => parseS3Location(location), InvalidArgumentError, location)
    }
    const bad: [string, S3StoreOptions][] = [
      ['half a key pair in options', { accessKeyId: 'AKIA', env: {} }],
      ['half a key pair in the environment', { env: { AWS_SECRET_ACCESS_KEY: 'only-the-secret' } }],
      ['a bad path-style flag', { env: { AWS_S3_FORCE_PATH_STYLE: 'sometimes' } }],
      ['a bad endpoint', { endpoint: 'ftp://127.0.0.1', env: {} }],
      ['a bad conditionalPut', { conditionalPut: 'maybe' as 'enabled', env: {} }],
      ['a bad page size', { listPageSize: 0, env: {} }],
      ['a bad retry option', { retry: { maxRetries: -1 }, env: {} }],
    ]
    for (const [label, options] of bad) {
      assert.throws(
        () => createS3Store('s3://lake/x', options),
        (err: unknown) => err instanceof InvalidArgumentError && !err.message.includes('only-the-secret'),
        label,
      )
    }
  })
})

describe('S3 credentials, endpoints and conditional puts against s3rver', () => {
  let server: TestServer
  const bucket = 'config'

  before(async () => {
    server = s3rver
    await createS3Bucket(server.endpoint, bucket)
  })

  it('reads the key pair, region and endpoint from the AWS environment variables', async () => {
    const location = `s3://${bucket}/${uniqueName('t')}`
    const env = {
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'eu-west-1',
    }
    await assertRoundTrip(
      createS3Store(location, { env: { ...env, AWS_ENDPOINT_URL_S3: server.endpoint }, retry: FAST }),
      createS3Store(location, { env: { ...env, AWS_ENDPOINT_URL: server.endpoint }, retry: FAST }),
    )
  })

  it('lets options win over environment variables', async () => {
    const store = createS3Store(`s3://${bucket}/x`, {
      endpoint: server.endpoint,
      accessKeyId: 'AKIAUNKNOWN',
      secretAccessKey: 'unknown',
      env: {
        AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      },
      retry: FAST,
    })
    await assert.rejects(
      store.read('k'),
      (err: unknown) => err instanceof StorageError && /credentials/.test(err.message),
    )
  })

  it('opens s3:// locations through openStore with backend options', async () => {
    const location = `s3://${bucket}/${uniqueName('t')}`
    const options = { s3: { endpoint: server.endpoint, ...S3RVER_CREDENTIALS, env: {} } }
    const store = openStore(location, options)
    assert.equal(store.root, location)
    await assertRoundTrip(store, openStore(location, options))
  })

  it("refuses put-if-absent with UnsupportedError when conditionalPut is 'disabled', and writes nothing", async () => {
    const location = `s3://${bucket}/${uniqueName('t')}`
    const store = createS3Store(location, {
      endpoint: server.endpoint,
      ...S3RVER_CREDENTIALS,
      conditionalPut: 'disabled',
      env: {},
    })
    await assert.rejects(
      store.put('_delta_log/00000000000000000000.json', enc('{}'), { ifNotExists: true }),
      (err: unknown) => {
        assert.ok(err instanceof UnsupportedError, String(err))
        assert.match(
          err.message,
          /cannot guarantee put-if-absent; commits are refused rather than risk a lost write/,
        )
        return true
      },
    )
    assert.deepEqual(await keys(store.listRecursive('')), [])
    await store.put('part-0.parquet', enc('data'))
    assert.deepEqual(await keys(store.listRecursive('')), ['part-0.parquet'])
  })
})

describe('paged listings', () => {
  const stores: [string, () => Promise<ObjectStore>][] = [
    [
      'azure',
      async () => {
        await createAzureContainer(azurite.endpoint, 'pages')
        return createAzureStore(`az://pages/${uniqueName('t')}`, {
          endpoint: azurite.endpoint,
          account: AZURITE_ACCOUNT,
          accountKey: AZURITE_KEY,
          listPageSize: 2,
          env: {},
        })
      },
    ],
    [
      's3',
      async () => {
        await createS3Bucket(s3rver.endpoint, 'pages')
        return createS3Store(`s3://pages/${uniqueName('t')}`, {
          endpoint: s3rver.endpoint,
          ...S3RVER_CREDENTIALS,
          listPageSize: 2,
          env: {},
        })
      },
    ],
  ]

  for (const [name, open] of stores) {
    it(`${name}: lists every entry across pages of two, skipping subdirectories in listFrom`, async () => {
      const store = await open()
      const files = ['d/a', 'd/b', 'd/c', 'd/m/1', 'd/m/2', 'd/m/3', 'd/n/1', 'd/x', 'd/y', 'd/z', 'e/1']
      for (const key of files) await store.put(key, enc(key))
      assert.deepEqual(await keys(store.listFrom('d/')), ['d/a', 'd/b', 'd/c', 'd/x', 'd/y', 'd/z'])
      assert.deepEqual(await keys(store.listFrom('d/c')), ['d/c', 'd/x', 'd/y', 'd/z'])
      assert.deepEqual(await keys(store.listFrom('d/n')), ['d/x', 'd/y', 'd/z'])
      assert.deepEqual(
        (await keys(store.listRecursive('d/'))).sort(),
        files.filter((k) => k.startsWith('d/')).sort(),
      )
      assert.deepEqual((await keys(store.listRecursive(''))).length, files.length)
    })
  }
})
