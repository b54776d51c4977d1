/// Owns a ``BinaryEncoderCore`` and runs the types' `encode(to:)`.
final class BinaryEncodingState: ManagedBuffer<BinaryEncoderCore, UInt8> {
    static func make() -> BinaryEncodingState {
        let buffer = create(minimumCapacity: 0) { _ in
            var core = BinaryEncoderCore(writer: BinaryWriter(bytes: []))
            // Small messages nest a few levels: one allocation each instead of growing 1, 2, 4.
            core.open.reserveCapacity(8)
            core.path.reserveCapacity(8)
            return core
        }
        return unsafeDowncast(buffer, to: BinaryEncodingState.self)
    }

    /// The fields, by address: no exclusivity check (see ``BinaryEncoderCore``).
    var core: BinaryEncoderCore {
        unsafeAddress { UnsafePointer(withUnsafeMutablePointerToHeader { $0 }) }
        unsafeMutableAddress { withUnsafeMutablePointerToHeader { $0 } }
    }

    /// Encodes the item of the container at `index` whose key (or index) is `key`.
    func encodeItem<T: Encodable>(_ value: T, index: Int, depth: Int, key: some CodingKey) throws {
        if core.writer.primitive(value) { return }
        core.setKey(key, at: depth)
        core.open[index].busy = true
        try encodeNested(value, depth: depth + 1, slot: core.writer.count)
        if index < core.open.count { core.open[index].busy = false }
        core.currentDepth = depth
    }

    /// Runs `value.encode(to:)` on the slot at `slot`, then closes what it opened.
    func encodeNested<T: Encodable>(_ value: T, depth: Int, slot: Int) throws {
        if let refuses = core.refuses, refuses(T.self) {
            throw BinaryCodingError(.unsupported, "\(T.self) is refused by this encoding", path: BinaryCodingError.unlocated)
        }
        let height = core.open.count
        core.currentDepth = depth
        try value.encode(to: BinaryValueEncoder(state: self, depth: depth, slot: slot))
        if core.writer.count == slot {
            // The value encoded nothing: an empty keyed container keeps the parent's count true.
            core.writer.emptyKeyed()
        }
        try core.close(above: height)
    }

    func superEncoder(in serial: Int, depth: Int, key: some CodingKey, writesKey: Bool) -> BinaryValueEncoder {
        let slot = core.superSlot(in: serial, depth: depth, key: key, writesKey: writesKey)
        return BinaryValueEncoder(state: self, depth: depth + 1, slot: slot)
    }

    /// Encodes a whole value at `slot`; throws ``BinaryCodingError`` whatever the type threw.
    func encodeRoot<T: Encodable>(_ value: T, slot: Int) throws(BinaryCodingError) {
        do {
            if !core.writer.primitive(value) {
                try encodeNested(value, depth: 0, slot: slot)
            }
            try core.close(above: 0)
            if let failure = core.failure { throw failure }
        } catch let error as BinaryCodingError {
            throw error.path == BinaryCodingError.unlocated
                ? BinaryCodingError(error.code, error.message, path: BinaryCodingError.path(core.codingPath(core.currentDepth)))
                : error
        } catch let EncodingError.invalidValue(_, context) {
            throw BinaryCodingError(.invalidValue, "the type refused to encode a value: \(context.debugDescription)",
                                    path: BinaryCodingError.path(context.codingPath))
        } catch {
            throw BinaryCodingError(.failed, "the type's encode(to:) threw: \(error)",
                                    path: BinaryCodingError.path(core.codingPath(core.currentDepth)))
        }
    }
}
