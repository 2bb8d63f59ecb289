/**
 * LayeredMap against a plain Map: random batches of sets and deletes applied to both give the
 * same entries in the same iteration order, the same size and the same lookups, and every
 * earlier map is left as it was (the layers are shared, never changed).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { LayeredMap } from '../../../src/log/layered-map.js'

const RUNS = Number(process.env.DELTA_RLC_PROPERTY_RUNS ?? 300)

type Change = readonly [number, string | undefined]

const changeArb: fc.Arbitrary<Change> = fc.tuple(
  fc.nat(40),
  fc.option(fc.string({ maxLength: 3 }), { nil: undefined, freq: 3 }),
)

function applyTo(map: Map<number, string>, changes: readonly Change[]): void {
  for (const [k, v] of changes) {
    if (v === undefined) map.delete(k)
    else map.set(k, v)
  }
}

function assertSame(
  layered: LayeredMap<number, string>,
  plain: ReadonlyMap<number, string>,
  at: string,
): void {
  assert.deepStrictEqual([...layered], [...plain], `entries ${at}`)
  assert.deepStrictEqual([...layered.keys()], [...plain.keys()], `keys ${at}`)
  assert.deepStrictEqual([...layered.values()], [...plain.values()], `values ${at}`)
  assert.equal(layered.size, plain.size, `size ${at}`)
  for (let k = 0; k <= 40; k++) {
    assert.equal(layered.get(k), plain.get(k), `get(${k}) ${at}`)
    assert.equal(layered.has(k), plain.has(k), `has(${k}) ${at}`)
  }
}

describe('LayeredMap', () => {
  it('iterates, sizes and looks up exactly as a Map given the same changes, and never changes an earlier map', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(40), fc.string({ maxLength: 3 })), { maxLength: 30 }),
        fc.array(fc.array(changeArb, { maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        (initial, batches) => {
          const plain = new Map<number, string>(initial)
          let layered = LayeredMap.of(new Map(plain))
          const history: Array<[LayeredMap<number, string>, Map<number, string>]> = [
            [layered, new Map(plain)],
          ]
          for (const [i, batch] of batches.entries()) {
            applyTo(plain, batch)
            layered = layered.with(batch)
            assertSame(layered, plain, `after batch ${i}`)
            history.push([layered, new Map(plain)])
          }
          for (const [i, [old, expected]] of history.entries()) assertSame(old, expected, `kept ${i}`)
        },
      ),
      { numRuns: RUNS, seed: 20_261_201 },
    )
  })

  it('stays shallow: a thousand one-key batches leave a map whose lookups see them all', () => {
    let layered = LayeredMap.of(new Map<number, string>([[0, 'base']]))
    const plain = new Map<number, string>([[0, 'base']])
    for (let i = 1; i <= 1000; i++) {
      const change: Change = [i % 97, i % 5 === 0 ? undefined : `v${i}`]
      applyTo(plain, [change])
      layered = layered.with([change])
    }
    assert.deepStrictEqual([...layered], [...plain])
  })

  it('returns itself for a batch that changes nothing', () => {
    const layered = LayeredMap.of(new Map([[1, 'a']]))
    assert.equal(layered.with([]), layered)
    assert.equal(layered.with([[2, undefined]]), layered)
  })
})
