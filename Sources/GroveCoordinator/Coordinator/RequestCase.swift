import GroveCluster
import GroveWire

/// The case of an event as the coordinator reads it in the bytes a client sent: the first key
/// of a JSON object (`{"add":{"_0":5}}`), or a JSON string (`"increment"`), escapes decoded;
/// in the binary codec, the first key of a keyed container or a string. What Swift's
/// synthesized `Codable` writes and reads for an enum case (``EventCase`` on the worker, which
/// reads it off the decoded event): an object with two different keys does not decode as an
/// enum, so the first key is the case of any event that can run.
///
/// Read only for events a client key sent (the requests that may witness a worker's crash,
/// ``Containment``): a crash report's case is counted only when it is the one the coordinator
/// forwarded, never on the worker's word alone. It looks at the first few bytes of the
/// payload, and makes no string beyond the case's own (none on the heap for a case of up to
/// 15 bytes).
enum RequestCase {
    /// The case of the event `payload` (binary when `binary`); nil when it has none this way
    /// (a number, an array, an empty object, bytes that are not JSON).
    static func name(of payload: UnsafeRawBufferPointer, binary: Bool) -> String? {
        let bytes = payload.assumingMemoryBound(to: UInt8.self)
        return binary ? binaryName(bytes) : jsonName(bytes)
    }

    /// The event after its idempotency key (header flag bit 4, docs/PROTOCOL.md "Idempotency
    /// keys"), which the coordinator passes on unread; empty when the key runs past the payload
    /// (the worker refuses that event, naming what is wrong).
    static func unkeyed(_ payload: UnsafeRawBufferPointer, flags: Header.Flags) -> UnsafeRawBufferPointer {
        guard flags.contains(.keyed) else { return payload }
        guard let length = payload.first.map(Int.init), payload.count >= 1 + length + 8 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: payload[(1 + length + 8)...])
    }

    private static func jsonName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = skipWhitespace(bytes, from: 0)
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "{") {
            index = skipWhitespace(bytes, from: index + 1)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        } else if bytes[index] != UInt8(ascii: "\"") {
            return nil
        }
        return jsonString(bytes, openingAt: index)
    }

    /// The JSON string whose opening quote is at `start`, unescaped.
    private static func jsonString(_ bytes: UnsafeBufferPointer<UInt8>, openingAt start: Int) -> String? {
        var index = start + 1
        var escaped = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard escaped else { return String(validating: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<index]), as: UTF8.self) }
                // Rare (a client that spells a case with escapes): the strict parser decodes them.
                var parser = LocatingJSONParser(Array(bytes[start...index]), document: "the event")
                guard case .string(let text)? = try? parser.parse() else { return nil }
                return text
            case UInt8(ascii: "\\"):
                escaped = true
                index += 2
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
        return index
    }

    /// docs/BINARY.md: `0x07` a string (its byte count, then UTF-8); `0x09` a keyed container
    /// (its entry count, then a key: even `h`, a string of `h >> 1` bytes).
    private static func binaryName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 1
        guard let tag = bytes.first else { return nil }
        if tag == 0x09 {
            guard let count = varint(bytes, &index), count > 0, let key = varint(bytes, &index), key & 1 == 0 else { return nil }
            return utf8(bytes, &index, count: key >> 1)
        }
        guard tag == 0x07, let count = varint(bytes, &index) else { return nil }
        return utf8(bytes, &index, count: count)
    }

    private static func utf8(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, count: UInt64) -> String? {
        guard count <= UInt64(bytes.count - index) else { return nil }
        return String(validating: UnsafeBufferPointer(rebasing: bytes[index..<(index + Int(count))]), as: UTF8.self)
    }

    /// A LEB128 varint of at most 64 bits.
    private static func varint(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
