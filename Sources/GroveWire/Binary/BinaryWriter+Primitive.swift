extension BinaryWriter {
    /// Writes `value` directly when it is a primitive; the standard library's primitives would
    /// otherwise each go through `encode(to:)` and a single value container.
    @inline(__always)
    mutating func primitive<T>(_ value: T) -> Bool {
        if T.self == String.self {
            string(unsafeBitCast(value, to: String.self))
        } else if T.self == Int.self {
            int(Int64(unsafeBitCast(value, to: Int.self)))
        } else if T.self == Double.self {
            double(unsafeBitCast(value, to: Double.self))
        } else if T.self == Bool.self {
            bool(unsafeBitCast(value, to: Bool.self))
        } else {
            return otherPrimitive(value)
        }
        return true
    }

    private mutating func otherPrimitive<T>(_ value: T) -> Bool {
        if T.self == Int64.self {
            int(unsafeBitCast(value, to: Int64.self))
        } else if T.self == UInt64.self {
            uint(unsafeBitCast(value, to: UInt64.self))
        } else if T.self == Float.self {
            float(unsafeBitCast(value, to: Float.self))
        } else if T.self == Int32.self {
            int(Int64(unsafeBitCast(value, to: Int32.self)))
        } else if T.self == UInt32.self {
            uint(UInt64(unsafeBitCast(value, to: UInt32.self)))
        } else if T.self == UInt.self {
            uint(UInt64(unsafeBitCast(value, to: UInt.self)))
        } else if T.self == UInt8.self {
            uint(UInt64(unsafeBitCast(value, to: UInt8.self)))
        } else if T.self == Int8.self {
            int(Int64(unsafeBitCast(value, to: Int8.self)))
        } else if T.self == Int16.self {
            int(Int64(unsafeBitCast(value, to: Int16.self)))
        } else if T.self == UInt16.self {
            uint(UInt64(unsafeBitCast(value, to: UInt16.self)))
        } else if T.self == Int128.self {
            int128(unsafeBitCast(value, to: Int128.self))
        } else if T.self == UInt128.self {
            uint128(unsafeBitCast(value, to: UInt128.self))
        } else {
            return false
        }
        return true
    }
}
