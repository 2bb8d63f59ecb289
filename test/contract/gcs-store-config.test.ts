/**
 * The Google Cloud Storage backend's configuration, without a server: location parsing, the
 * openStore dispatch, option checks, and that no secret shows in the store's root, JSON or
 * util.inspect form.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inspect } from 'node:util'
import { InvalidArgumentError, UnsupportedError } from '../../src/errors/index.js'
import { createGcsStore, openStore, parseGcsLocation } from '../../src/storage/index.js'

const KEY = { client_email: 'sa@project.iam.gserviceaccount.com', private_key: 'PRIVATE-KEY-0123456789' }

describe('Google Cloud Storage store configuration', () => {
  it('parses gs:// locations and refuses malformed ones', () => {
    assert.deepEqual(
      { ...parseGcsLocation('gs://lake/sales/2024/') },
      {
        bucket: 'lake',
        prefix: 'sales/2024',
        display: 'gs://lake/sales/2024',
      },
    )
    assert.deepEqual(
      { ...parseGcsLocation('gs://lake') },
      { bucket: 'lake', prefix: '', display: 'gs://lake' },
    )
    for (const bad of ['gs://', 'gcs://lake/t', 'gs://lake/a/../b', 'gs://lake/a//b']) {
      assert.throws(() => parseGcsLocation(bad), InvalidArgumentError, bad)
    }
  })

  it('openStore opens gs:// with the gcs options; other schemes stay unsupported', () => {
    const store = openStore('gs://lake/sales', { gcs: { endpoint: 'http://127.0.0.1:1', env: {} } })
    assert.equal(store.root, 'gs://lake/sales')
    assert.equal(typeof store.listPrefix, 'function')
    assert.throws(() => openStore('hdfs://nn/t'), UnsupportedError)
  })

  it('checks the endpoint and credentials options', () => {
    assert.throws(() => createGcsStore('gs://lake/t', { endpoint: 'ftp://h', env: {} }), InvalidArgumentError)
    assert.throws(
      () => createGcsStore('gs://lake/t', { credentials: { client_email: 'x', private_key: '' }, env: {} }),
      InvalidArgumentError,
    )
    // STORAGE_EMULATOR_HOST as a bare host:port, or in the SDK's form with the API path.
    for (const host of ['127.0.0.1:4443', 'http://127.0.0.1:4443/storage/v1']) {
      const store = createGcsStore('gs://lake/t', { env: { STORAGE_EMULATOR_HOST: host } })
      assert.equal(store.root, 'gs://lake/t')
    }
  })

  it('shows no secret in root, JSON or util.inspect', () => {
    const store = createGcsStore('gs://lake/t', { credentials: KEY, env: {} })
    for (const text of [store.root, JSON.stringify(store), inspect(store, { depth: 10, showHidden: true })]) {
      assert.ok(!text.includes(KEY.private_key), text)
    }
    assert.deepEqual(JSON.parse(JSON.stringify(store)), {
      root: 'gs://lake/t',
      service: 'Google Cloud Storage',
    })
  })
})
