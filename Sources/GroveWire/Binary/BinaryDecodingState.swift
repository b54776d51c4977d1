/// Owns a ``BinaryDecoderCore`` and runs the types' `init(from:)`.
final class BinaryDecodingState: ManagedBuffer<BinaryDecoderCore, UInt8> {
    static func make() -> BinaryDecodingState {
        let buffer = create(minimumCapacity: 0) { _ in
            var core = BinaryDecoderCore(reader: .empty)
            core.cursors.reserveCapacity(8)
            core.path.reserveCapacity(8)
            return core
        }
        return unsafeDowncast(buffer, to: BinaryDecodingState.self)
    }

    /// The fields, by address: no exclusivity check.
    var core: BinaryDecoderCore {
        unsafeAddress { UnsafePointer(withUnsafeMutablePointerToHeader { $0 }) }
        unsafeMutableAddress { withUnsafeMutablePointerToHeader { $0 } }
    }

    /// Decodes the value at `offset`: the item with `key` of the container at `depth`, or with
    /// ``BinaryNoKey`` the value of a single value container at `depth`.
    /// - Parameter end: Set to the offset past the value, or -1 when the type did not read it to
    ///   its end (the caller skips it if it needs to).
    func decodeValue<T: Decodable, K: CodingKey>(
        _ type: T.Type, at offset: Int, depth: Int, key: K, end: inout Int
    ) throws -> T {
        // The standard library's primitives, read without their `init(from:)`.
        do throws(BinaryCodingError) {
            if T.self == String.self { return unsafeBitCast(try core.reader.string(at: offset, end: &end), to: T.self) }
            if T.self == Int.self { return unsafeBitCast(try core.reader.integer(Int.self, at: offset, end: &end), to: T.self) }
            if T.self == Double.self { return unsafeBitCast(try core.reader.double(at: offset, end: &end), to: T.self) }
            if T.self == Bool.self { return unsafeBitCast(try core.reader.bool(at: offset, end: &end), to: T.self) }
            if T.self == Int64.self { return unsafeBitCast(try core.reader.integer(Int64.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt64.self { return unsafeBitCast(try core.reader.integer(UInt64.self, at: offset, end: &end), to: T.self) }
            if T.self == Float.self { return unsafeBitCast(try core.reader.float(at: offset, end: &end), to: T.self) }
            if T.self == Int32.self { return unsafeBitCast(try core.reader.integer(Int32.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt32.self { return unsafeBitCast(try core.reader.integer(UInt32.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt.self { return unsafeBitCast(try core.reader.integer(UInt.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt8.self { return unsafeBitCast(try core.reader.integer(UInt8.self, at: offset, end: &end), to: T.self) }
            if T.self == Int8.self { return unsafeBitCast(try core.reader.integer(Int8.self, at: offset, end: &end), to: T.self) }
            if T.self == Int16.self { return unsafeBitCast(try core.reader.integer(Int16.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt16.self { return unsafeBitCast(try core.reader.integer(UInt16.self, at: offset, end: &end), to: T.self) }
            if T.self == Int128.self { return unsafeBitCast(try core.reader.integer(Int128.self, at: offset, end: &end), to: T.self) }
            if T.self == UInt128.self { return unsafeBitCast(try core.reader.integer(UInt128.self, at: offset, end: &end), to: T.self) }
        } catch {
            throw core.locate(error, depth: depth, key: key)
        }
        var valueDepth = depth
        if K.self != BinaryNoKey.self {
            core.setKey(key, at: depth)
            valueDepth += 1
        }
        guard valueDepth <= BinaryCodec.maximumDepth else { throw core.locate(BinaryReader.tooDeep(), depth: depth, key: key) }
        core.currentDepth = valueDepth
        let value = try T(from: BinaryValueDecoder(state: self, offset: offset, depth: valueDepth))
        core.currentDepth = depth
        end = core.knownEnd(of: offset)
        return value
    }
}
