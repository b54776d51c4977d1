/// Where one JSON value ends, found without building it: strict JSON (RFC 8259, UTF-8, nesting
/// up to 512 levels as Foundation's decoder allows), nothing allocated. What the coordinator
/// needs of a worker's `state-changed` payload on its hot path: that the state a Swift worker
/// splices into `{"address":…,"worker":…,"state":…}` is one value and nothing follows it, so
/// no key can come twice and the bytes can be spliced into a snapshot as they are. Keys inside
/// the value are not compared (the coordinator reads nothing in there).
enum JSONScan {
    static let maximumDepth = 512

    /// The index just after the value that starts at `start` and the whitespace after it
    /// (whitespace before it skipped too); nil when no valid value starts there.
    static func end(ofValueIn bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = skipWhitespace(bytes, start)
        // One bit per open container, set for an object: closing brackets must match.
        var objects = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var depth = 0
        func isObject(_ level: Int) -> Bool {
            withUnsafeBytes(of: &objects) { $0.load(fromByteOffset: level / 64 * 8, as: UInt64.self) } & (1 << UInt64(level % 64)) != 0
        }
        func open(asObject: Bool) -> Bool {
            guard depth < maximumDepth else { return false }
            withUnsafeMutableBytes(of: &objects) { raw in
                let offset = depth / 64 * 8
                var word = raw.load(fromByteOffset: offset, as: UInt64.self)
                word = asObject ? word | (1 << UInt64(depth % 64)) : word & ~(1 << UInt64(depth % 64))
                raw.storeBytes(of: word, toByteOffset: offset, as: UInt64.self)
            }
            depth += 1
            return true
        }
        // A value is expected at `index`; after it, a comma, a closing bracket or the end.
        while true {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard open(asObject: true) else { return nil }
                index = skipWhitespace(bytes, index + 1)
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    depth -= 1
                    index += 1
                } else {
                    guard let afterKey = key(bytes, index) else { return nil }
                    index = afterKey
                    continue
                }
            case UInt8(ascii: "["):
                guard open(asObject: false) else { return nil }
                index = skipWhitespace(bytes, index + 1)
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    depth -= 1
                    index += 1
                } else {
                    continue
                }
            case UInt8(ascii: "\""):
                guard let after = endOfString(bytes, index) else { return nil }
                index = after
            case UInt8(ascii: "t"):
                guard let after = literal(bytes, index, "true") else { return nil }
                index = after
            case UInt8(ascii: "f"):
                guard let after = literal(bytes, index, "false") else { return nil }
                index = after
            case UInt8(ascii: "n"):
                guard let after = literal(bytes, index, "null") else { return nil }
                index = after
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let after = endOfNumber(bytes, index) else { return nil }
                index = after
            default:
                return nil
            }
            // After a value: close what ends here, then a comma (and the next member) or the end.
            while true {
                index = skipWhitespace(bytes, index)
                guard depth > 0 else { return index }
                guard index < bytes.count else { return nil }
                let inObject = isObject(depth - 1)
                if bytes[index] == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    depth -= 1
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index = skipWhitespace(bytes, index + 1)
                if inObject {
                    guard let afterKey = key(bytes, index) else { return nil }
                    index = afterKey
                }
                break
            }
        }
    }

    /// After a member's key and its colon, at its value; nil when there is no key there.
    private static func key(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\""), let after = endOfString(bytes, start) else { return nil }
        let colon = skipWhitespace(bytes, after)
        guard colon < bytes.count, bytes[colon] == UInt8(ascii: ":") else { return nil }
        return skipWhitespace(bytes, colon + 1)
    }

    /// After the string whose opening quote is at `start`: escapes as JSON allows them, no
    /// control character, UTF-8.
    private static func endOfString(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var index = start + 1
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard ascii || isUTF8(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<index])) else { return nil }
                return index + 1
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                     UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard index + 5 < bytes.count, (2...5).allSatisfy({ isHex(bytes[index + $0]) }) else { return nil }
                    index += 6
                default:
                    return nil
                }
            case 0..<0x20:
                return nil
            default:
                if byte >= 0x80 { ascii = false }
                index += 1
            }
        }
        return nil
    }

    private static func endOfNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var index = start
        func digits() -> Bool {
            let first = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            return index > first
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { return nil }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else { _ = digits() }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() else { return nil }
        }
        return index
    }

    private static func literal(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ text: StaticString) -> Int? {
        let count = text.utf8CodeUnitCount
        guard bytes.count - start >= count else { return nil }
        for offset in 0..<count where bytes[start + offset] != text.utf8Start[offset] { return nil }
        return start + count
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
        return index
    }

    private static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
