/// Writes a value in the binary format as JSON, byte for byte as `JSONEncoder` with
/// `.sortedKeys` and `.withoutEscapingSlashes` writes it (see ``WireJSON/encode(_:)``).
///
/// Keyed containers become objects with their keys sorted by UTF-8 bytes, unkeyed ones arrays; strings are escaped as `JSONEncoder` escapes them.
/// Returns nil for what it does not write exactly like `JSONEncoder`: floating-point numbers
/// (`JSONEncoder` has its own formatting), 128-bit integers, keys that are not ASCII (whose order
/// could differ), integer keys (`[Int: V]`, which sort as text) and duplicate keys.
struct BinaryJSONWriter {
    private let input: UnsafeBufferPointer<UInt8>
    private var output: [UInt8] = []

    private init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
    }

    static func json(from binary: [UInt8]) -> [UInt8]? {
        binary.withUnsafeBufferPointer { buffer in
            var writer = BinaryJSONWriter(input: buffer)
            writer.output.reserveCapacity(binary.count + binary.count / 2 + 8)
            writer.entries.reserveCapacity(16)
            var offset = 0
            guard writer.value(at: &offset, depth: 0), offset == buffer.count else { return nil }
            return writer.output
        }
    }

    private var reader: BinaryReader { BinaryReader(bytes: input) }

    /// Writes the value at `offset` and moves `offset` past it.
    private mutating func value(at offset: inout Int, depth: Int) -> Bool {
        guard depth <= BinaryCodec.maximumDepth, offset < input.count else { return false }
        let tag = input[offset]
        offset += 1
        switch tag {
        case BinaryTag.null: output.append(contentsOf: "null".utf8)
        case BinaryTag.falseValue: output.append(contentsOf: "false".utf8)
        case BinaryTag.trueValue: output.append(contentsOf: "true".utf8)
        case BinaryTag.int:
            guard let bits = try? reader.varint(&offset) else { return false }
            decimal(BinaryFormat.unzigzag(bits))
        case BinaryTag.uint:
            guard let number = try? reader.varint(&offset) else { return false }
            decimal(number)
        case BinaryTag.string:
            guard let length = try? reader.count(&offset, itemSize: 1, of: "a String") else { return false }
            guard string(offset ..< offset + length) else { return false }
            offset += length
        case BinaryTag.unkeyed:
            guard let count = try? reader.count(&offset, itemSize: 1, of: "an unkeyed container") else { return false }
            output.append(UInt8(ascii: "["))
            for index in 0 ..< count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                guard value(at: &offset, depth: depth + 1) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case BinaryTag.keyed:
            return object(at: &offset, depth: depth)
        default:
            // Double, Float (JSONEncoder formats them its own way), 128-bit integers, or not the format.
            return false
        }
        return true
    }

    /// A key and where its value starts. A string key is `start..<start + count` of the input;
    /// an integer key (`start == -1`) is its number.
    private struct Entry {
        var start: Int
        var count: Int
        var value: Int
    }

    /// Entries of the objects being written, innermost last: one array for the whole value.
    private var entries: [Entry] = []

    private func keyBytes(_ entry: Entry) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: input[entry.start ..< entry.start + entry.count])
    }

    private mutating func object(at offset: inout Int, depth: Int) -> Bool {
        guard let count = try? reader.count(&offset, itemSize: 2, of: "a keyed container") else { return false }
        let first = entries.count
        defer { entries.removeSubrange(first...) }
        for _ in 0 ..< count {
            guard let key = try? reader.key(&offset) else { return false }
            switch key {
            case .int:
                // Integer keys (those of [Int: V]) sort as their decimal text; rare: left to JSONEncoder.
                return false
            case .string(let start, let length):
                // JSONEncoder sorts by String order, which is byte order only for ASCII.
                for index in start ..< start + length where input[index] >= 0x80 { return false }
                entries.append(Entry(start: start, count: length, value: offset))
            }
            guard let next = try? reader.skip(from: offset, depth: depth + 1) else { return false }
            offset = next
        }
        let input = input
        if count > 1 { entries[first...].sort { left, right in
            UnsafeBufferPointer(rebasing: input[left.start ..< left.start + left.count])
                .lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: input[right.start ..< right.start + right.count]))
        } }
        output.append(UInt8(ascii: "{"))
        for index in first ..< first + count {
            let entry = entries[index]
            if index > first {
                guard !keyBytes(entry).elementsEqual(keyBytes(entries[index - 1])) else { return false }
                output.append(UInt8(ascii: ","))
            }
            guard escaped(keyBytes(entry)) else { return false }
            output.append(UInt8(ascii: ":"))
            var valueOffset = entry.value
            guard value(at: &valueOffset, depth: depth + 1) else { return false }
        }
        output.append(UInt8(ascii: "}"))
        return true
    }

    private mutating func decimal(_ number: Int64) {
        if number < 0 {
            output.append(UInt8(ascii: "-"))
            decimal(number.magnitude)
        } else {
            decimal(UInt64(number))
        }
    }

    private mutating func decimal(_ number: UInt64) {
        var rest = number
        let start = output.count
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        output[start...].reverse()
    }

    /// The string at `range` of the input, quoted and escaped; false when it is not UTF-8.
    private mutating func string(_ range: Range<Int>) -> Bool {
        guard reader.text(start: range.lowerBound, count: range.count) != nil else { return false }
        return escaped(UnsafeBufferPointer(rebasing: input[range]))
    }

    /// `bytes` (valid UTF-8) as a JSON string, escaped as JSONEncoder escapes.
    private mutating func escaped(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        output.append(UInt8(ascii: "\""))
        var plain = 0 // start of the run of bytes that need no escaping
        for index in 0 ..< bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain ..< index]))
            plain = index + 1
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            default:
                let hex: StaticString = "0123456789abcdef"
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex.utf8Start[Int(byte >> 4)])
                output.append(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain...]))
        output.append(UInt8(ascii: "\""))
        return true
    }
}
