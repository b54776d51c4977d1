/// Rewrites JSON text as the binary format, so that ``BinaryCodec``'s decoder can decode JSON
/// several times faster than `JSONDecoder` (see ``WireJSON/decodeQuickly(_:from:)``).
///
/// Objects become keyed containers with string keys in document order, arrays unkeyed
/// containers, strings are unescaped. A number with neither fraction nor exponent becomes an
/// integer (Int64, else UInt64, else a Double); any other number a Double, or an integer when
/// it is integral and below 2^53 (`1.0`, `1e2`), as `JSONDecoder` accepts those for integer types. The
/// transcoder refuses (returns nil) whatever is not strict JSON, non-finite numbers, lone
/// surrogates and nesting deeper than ``BinaryCodec/maximumDepth``.
struct JSONTranscoder {
    private let input: UnsafeBufferPointer<UInt8>
    private var offset = 0
    private var writer = BinaryWriter(bytes: [])
    private var scratch: [UInt8] = []

    private init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
    }

    /// The binary form of `json`, or nil when it is not JSON this transcoder accepts.
    static func transcode(_ json: ArraySlice<UInt8>) -> [UInt8]? {
        json.withUnsafeBufferPointer { buffer in
            var transcoder = JSONTranscoder(input: buffer)
            transcoder.writer.bytes.reserveCapacity(json.count + 8)
            guard transcoder.value(depth: 0) else { return nil }
            transcoder.skipSpace()
            guard transcoder.offset == buffer.count else { return nil }
            return transcoder.writer.bytes
        }
    }

    private mutating func skipSpace() {
        while offset < input.count {
            switch input[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> Bool {
        skipSpace()
        guard offset < input.count else { return false }
        switch input[offset] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""):
            writer.bytes.append(BinaryTag.string)
            return string(lengthShift: 0)
        case UInt8(ascii: "t"):
            guard literal("true") else { return false }
            writer.bool(true)
            return true
        case UInt8(ascii: "f"):
            guard literal("false") else { return false }
            writer.bool(false)
            return true
        case UInt8(ascii: "n"):
            guard literal("null") else { return false }
            writer.null()
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
            return number()
        default:
            return false
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard input.count - offset >= count else { return false }
        for index in 0 ..< count where input[offset + index] != word.utf8Start[index] { return false }
        offset += count
        return true
    }

    private mutating func object(depth: Int) -> Bool {
        container(keyed: true, closing: UInt8(ascii: "}"), depth: depth) { transcoder in
            // A key, a colon, then the value.
            transcoder.skipSpace()
            guard transcoder.next(is: UInt8(ascii: "\"")), transcoder.string(lengthShift: 1) else { return false }
            transcoder.skipSpace()
            guard transcoder.next(is: UInt8(ascii: ":")) else { return false }
            transcoder.offset += 1
            return transcoder.value(depth: depth + 1)
        }
    }

    private mutating func array(depth: Int) -> Bool {
        container(keyed: false, closing: UInt8(ascii: "]"), depth: depth) { $0.value(depth: depth + 1) }
    }

    /// An object or array from its opening bracket: items separated by commas up to `closing`,
    /// each read by `item`; writes the container and its count.
    private mutating func container(keyed: Bool, closing: UInt8, depth: Int, item: (inout JSONTranscoder) -> Bool) -> Bool {
        guard depth < BinaryCodec.maximumDepth else { return false }
        offset += 1
        let countAt = writer.openContainer(keyed: keyed)
        skipSpace()
        if next(is: closing) {
            offset += 1
            return true
        }
        var count = 0
        while true {
            guard item(&self) else { return false }
            count += 1
            skipSpace()
            guard offset < input.count else { return false }
            let separator = input[offset]
            offset += 1
            if separator == closing { break }
            guard separator == UInt8(ascii: ",") else { return false }
        }
        writer.patchCount(count, at: countAt)
        return true
    }

    private func next(is byte: UInt8) -> Bool {
        offset < input.count && input[offset] == byte
    }

    /// A string starting at the opening quote, written as varint(length << shift) and UTF-8:
    /// shift 0 for a string value (after its tag), 1 for a key.
    private mutating func string(lengthShift: UInt64) -> Bool {
        offset += 1
        let start = offset
        while offset < input.count {
            let byte = input[offset]
            if byte == UInt8(ascii: "\"") {
                writer.varint(UInt64(offset - start) << lengthShift)
                writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[start ..< offset]))
                offset += 1
                return true
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start, lengthShift: lengthShift) }
            guard byte >= 0x20 else { return false }
            offset += 1
        }
        return false
    }

    /// The slow path of ``string(lengthShift:)``: unescapes into `scratch` first.
    private mutating func escapedString(from start: Int, lengthShift: UInt64) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[start ..< offset]))
        while offset < input.count {
            let byte = input[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                writer.varint(UInt64(scratch.count) << lengthShift)
                writer.bytes.append(contentsOf: scratch)
                return true
            case UInt8(ascii: "\\"):
                guard offset < input.count else { return false }
                let escape = input[offset]
                offset += 1
                if let character = JSONEscape.character(for: escape) {
                    scratch.append(character)
                } else if escape == UInt8(ascii: "u"), let scalar = unicodeEscape() {
                    scratch.append(contentsOf: Array(String(Character(scalar)).utf8))
                } else {
                    return false
                }
            default:
                guard byte >= 0x20 else { return false }
                scratch.append(byte)
            }
        }
        return false
    }

    /// The scalar of `\uXXXX` (the `\u` already read), joining a surrogate pair.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        if high < 0xD800 || high > 0xDFFF { return Unicode.Scalar(high) }
        guard high < 0xDC00, input.count - offset >= 2, input[offset] == UInt8(ascii: "\\"),
              input[offset + 1] == UInt8(ascii: "u") else { return nil }
        offset += 2
        guard let low = hex4(), (0xDC00 ... 0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    private mutating func hex4() -> UInt32? {
        guard input.count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            let byte = input[offset]
            offset += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func number() -> Bool {
        let start = offset
        let negative = input[offset] == UInt8(ascii: "-")
        if negative { offset += 1 }
        // Integer part: 0, or a digit 1-9 followed by digits (no leading zeros).
        guard offset < input.count, isDigit(input[offset]) else { return false }
        if input[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        let integerEnd = offset
        var integral = true
        if offset < input.count, input[offset] == UInt8(ascii: ".") {
            integral = false
            offset += 1
            guard offset < input.count, isDigit(input[offset]) else { return false }
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        if offset < input.count, input[offset] == UInt8(ascii: "e") || input[offset] == UInt8(ascii: "E") {
            integral = false
            offset += 1
            if offset < input.count, input[offset] == UInt8(ascii: "+") || input[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < input.count, isDigit(input[offset]) else { return false }
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        if integral, let value = integer(from: negative ? start + 1 : start, to: integerEnd, negative: negative) {
            writeInteger(value)
            return true
        }
        guard let value = Double(String(decoding: UnsafeBufferPointer(rebasing: input[start ..< offset]), as: UTF8.self)),
              value.isFinite else { return false }
        // A number too small for a Double: JSONDecoder refuses it for Double and reads 0 for
        // integer types; left to it.
        if value == 0, input[start ..< offset].contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }),
           !hasZeroMantissaBeforeExponent(start ..< offset) { return false }
        // Beyond 2^53 the Double may not be the number written, which JSONDecoder reads exactly
        // for integer types: kept a Double, so an integer type refuses it and JSONDecoder decides.
        if abs(value) < 0x1p53, value.rounded() == value, !(value == 0 && value.sign == .minus) {
            writer.int(Int64(value))
        } else {
            writer.double(value)
        }
        return true
    }

    /// Whether the digits before any exponent are all zero (`0.0e5`): then 0 is exact.
    private func hasZeroMantissaBeforeExponent(_ range: Range<Int>) -> Bool {
        for index in range {
            let byte = input[index]
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return true }
            if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return false }
        }
        return true
    }

    private enum Integer {
        case signed(Int64)
        case unsigned(UInt64)
    }

    private mutating func writeInteger(_ value: Integer) {
        switch value {
        case .signed(let number): writer.int(number)
        case .unsigned(let number): writer.uint(number)
        }
    }

    /// The digits in `start..<end` as an integer, or nil when they overflow UInt64 (or Int64 when
    /// negative): such numbers are decoded as Double, as `JSONDecoder` does.
    private func integer(from start: Int, to end: Int, negative: Bool) -> Integer? {
        var magnitude: UInt64 = 0
        for index in start ..< end {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(input[index] - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            magnitude = sum
        }
        if negative {
            // -0 stays a Double (-0.0), as JSONDecoder reads it for floating-point types.
            guard magnitude != 0, magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .signed(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        return magnitude <= UInt64(Int64.max) ? .signed(Int64(magnitude)) : .unsigned(magnitude)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
