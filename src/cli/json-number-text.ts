/**
 * A byte stream transform that turns every number of a JSON text into a string holding the
 * number's own text (`{"a": 1.005}` becomes `{"a": "1.005"}`), so that DuckDB's JSON reader,
 * which parses numbers as doubles, hands the input reader each number's exact digits to check
 * and convert. Strings, keywords, whitespace and line breaks pass through unchanged, so line
 * numbers stay those of the input.
 *
 * The scan is lexical (outside a string, a number starts with `-` or a digit), and works on
 * bytes: in UTF-8 no byte of a multi-byte character is an ASCII quote, backslash or digit.
 */
import { Transform, type TransformCallback } from 'node:stream'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const MINUS = 0x2d

function startsNumber(b: number): boolean {
  return b === MINUS || (b >= 0x30 && b <= 0x39)
}

/** Digits, signs, point and exponent: the bytes a JSON number is made of. */
function continuesNumber(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === MINUS || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45
}

const QUOTE_BYTE = Buffer.from('"')

/** A transform quoting the numbers of a JSON text; see the module comment. */
export class JsonNumberText extends Transform {
  #inString = false
  #escaped = false
  #inNumber = false

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const parts: Buffer[] = []
    let from = 0
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false
        else if (b === BACKSLASH) this.#escaped = true
        else if (b === QUOTE) this.#inString = false
        continue
      }
      if (this.#inNumber) {
        if (continuesNumber(b)) continue
        parts.push(chunk.subarray(from, i), QUOTE_BYTE)
        from = i
        this.#inNumber = false
      }
      if (b === QUOTE) this.#inString = true
      else if (startsNumber(b)) {
        parts.push(chunk.subarray(from, i), QUOTE_BYTE)
        from = i
        this.#inNumber = true
      }
    }
    parts.push(chunk.subarray(from))
    done(null, parts.length === 1 ? chunk : Buffer.concat(parts))
  }

  override _flush(done: TransformCallback): void {
    done(null, this.#inNumber ? QUOTE_BYTE : null)
  }
}
