/// The one-byte tags that start every value (see the format in `BinaryCodec.swift`).
enum BinaryTag {
    static let null: UInt8 = 0x00
    static let falseValue: UInt8 = 0x01
    static let trueValue: UInt8 = 0x02
    static let int: UInt8 = 0x03
    static let uint: UInt8 = 0x04
    static let double: UInt8 = 0x05
    static let float: UInt8 = 0x06
    static let string: UInt8 = 0x07
    static let unkeyed: UInt8 = 0x08
    static let keyed: UInt8 = 0x09
    static let int128: UInt8 = 0x0A
    static let uint128: UInt8 = 0x0B

    static func isKnown(_ tag: UInt8) -> Bool { tag <= uint128 }

    /// The tag's kind in words, for error messages.
    static func name(_ tag: UInt8) -> String {
        switch tag {
        case null: "nil"
        case falseValue, trueValue: "a Bool"
        case int: "a signed integer"
        case uint: "an unsigned integer"
        case double: "a Double"
        case float: "a Float"
        case string: "a String"
        case unkeyed: "an unkeyed container (array)"
        case keyed: "a keyed container (struct, enum or dictionary)"
        case int128: "a 128-bit signed integer"
        case uint128: "a 128-bit unsigned integer"
        default: "unknown tag 0x\(String(tag, radix: 16))"
        }
    }
}

/// Shared arithmetic of the format.
enum BinaryFormat {
    /// Maps signed to unsigned so that small magnitudes of either sign make short varints.
    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value &<< 1) ^ (value &>> 63))
    }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value &>> 1) ^ (0 &- (value & 1)))
    }
}

/// A key of a keyed container as read from the input, without making a String.
enum BinaryEntryKey {
    /// UTF-8 bytes at `start..<start + count` of the input.
    case string(start: Int, count: Int)
    case int(Int)
}

/// The key of elements of unkeyed containers, for coding paths.
struct BinaryIndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The key `super` of `superEncoder()` and `superDecoder()`.
struct BinarySuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { if stringValue != "super" { return nil } }
    init?(intValue: Int) { nil }
}

extension BinaryCodingError {
    /// A JSON path for keys: `$.machines[2].worker`.
    static func path(_ keys: some Sequence<any CodingKey>) -> String {
        var text = "$"
        for key in keys {
            if key is BinaryIndexKey, let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += "." + key.stringValue
            }
        }
        return text
    }
}

/// Stands for "no key" where a value is decoded from a single value container: its path is its
/// container's path.
struct BinaryNoKey: CodingKey {
    var stringValue: String { "" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
