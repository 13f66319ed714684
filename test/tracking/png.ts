import { crc32, deflateSync } from 'node:zlib'

/** A real PNG (a parcel on a doorstep, drawn in flat colours) for proof-of-delivery photos in tests. */
export function doorstepPng(width = 240, height = 160): Buffer {
  const rows: Buffer[] = []
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3)
    for (let x = 0; x < width; x++) {
      const parcel = x > 90 && x < 150 && y > 70 && y < 130
      const tape = parcel && Math.abs(x - 120) < 4
      const floor = y >= 130
      const [r, g, b] = tape ? [230, 210, 150] : parcel ? [176, 124, 70] : floor ? [120, 120, 125] : [200, 215, 225]
      row[1 + x * 3] = r; row[2 + x * 3] = g; row[3 + x * 3] = b
    }
    rows.push(row)
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(body) >>> 0)
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4); ihdr[8] = 8; ihdr[9] = 2
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))])
}
