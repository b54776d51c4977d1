/// A container whose count is written when it closes.
struct BinaryOpenContainer {
    let serial: Int
    /// Where the count placeholder is.
    let countOffset: Int
    let keyed: Bool
    var count = 0
    /// One of its values is being encoded: writing to it now would interleave the two.
    var busy = false
}

/// What one `BinaryCodec.encode` call shares between its encoders and containers.
///
/// Codable's encoders never learn that a container is finished, so this encoder streams: a
/// container stays open until its parent is written to again or the value that opened it returns
/// from `encode(to:)`; then its count is filled in. Types that write to a container after leaving
/// it for its parent (legal Codable, rare in practice) get a ``BinaryCodingError/Code/unsupported``
/// error instead of a corrupt message.
///
/// The fields live in a `ManagedBuffer` header reached through an address accessor: stored
/// properties of a class would cost a dynamic exclusivity check on every byte written. Methods
/// that run a type's `encode(to:)` (which re-enters) are on ``BinaryEncodingState`` and touch the
/// fields in short accesses; the rest are mutating methods here.
struct BinaryEncoderCore {
    var writer: BinaryWriter
    /// Open containers, outermost first; serials increase upward.
    var open: [BinaryOpenContainer] = []
    var path: [any CodingKey] = []
    /// Path length of the value being encoded, for errors thrown by the types themselves.
    var currentDepth = 0
    var nextSerial = 0
    /// Offset of a slot handed out by `superEncoder()` that nothing was written to yet.
    var pendingSlot = -1
    /// An error found where Codable gives no way to throw (`nestedContainer`, `superEncoder`).
    var failure: BinaryCodingError?
    /// Types this encoding must not contain (the JSON fast path refuses the types `JSONEncoder`
    /// encodes its own way: `Date`, `Data`, `URL`, `Decimal`).
    var refuses: ((Any.Type) -> Bool)?

    func codingPath(_ depth: Int) -> [any CodingKey] { Array(path.prefix(depth)) }

    /// Empties the state for the next message, keeping the arrays' capacity.
    mutating func reset() {
        writer.bytes = []
        open.removeAll(keepingCapacity: true)
        path.removeAll(keepingCapacity: true)
        currentDepth = 0
        nextSerial = 0
        pendingSlot = -1
        failure = nil
        refuses = nil
    }

    /// Sets `path[depth]`, the key of the value about to be encoded at `depth + 1`.
    mutating func setKey(_ key: some CodingKey, at depth: Int) {
        if path.count > depth {
            path[depth] = key
        } else {
            while path.count < depth { path.append(BinaryIndexKey(-1)) }
            path.append(key)
        }
    }

    func fail(_ code: BinaryCodingError.Code, _ message: String) -> BinaryCodingError {
        BinaryCodingError(code, message, path: BinaryCodingError.path(codingPath(currentDepth)))
    }

    mutating func record(_ error: BinaryCodingError) {
        if failure == nil { failure = error }
    }

    func index(of serial: Int) -> Int? {
        var index = open.count - 1
        while index >= 0, open[index].serial >= serial {
            if open[index].serial == serial { return index }
            index -= 1
        }
        return nil
    }

    /// Counts one more item in container `serial` after closing what was nested in it since.
    /// - Returns: The container's index in `open`.
    @inline(__always)
    mutating func beginItem(_ serial: Int) throws(BinaryCodingError) -> Int {
        if let failure { throw failure }
        let top = open.count - 1
        let position: Int
        if top >= 0, open[top].serial == serial, pendingSlot < 0 {
            position = top
        } else {
            guard let found = index(of: serial) else {
                throw fail(.unsupported, "a container was written to after it was finished (its parent was written to since); write each container's values before moving on")
            }
            try close(above: found + 1)
            position = found
        }
        guard !open[position].busy else {
            throw fail(.unsupported, "a container was written to while one of its own values was being encoded; encode values one after another")
        }
        open[position].count += 1
        return position
    }

    /// Writes `key` as the next entry of keyed container `serial`.
    @inline(__always)
    mutating func beginEntry(_ serial: Int, key: some CodingKey) throws(BinaryCodingError) {
        _ = try beginItem(serial)
        writer.key(key)
    }

    /// Closes the containers above `height`, filling in their counts.
    mutating func close(above height: Int) throws(BinaryCodingError) {
        if pendingSlot >= 0 {
            if writer.count == pendingSlot { writer.emptyKeyed() }
            pendingSlot = -1
        }
        while open.count > height {
            let container = open[open.count - 1]
            if container.busy {
                throw fail(.unsupported, "an outer container was written to while a nested value was being encoded; encode values one after another")
            }
            open.removeLast()
            writer.patchCount(container.count, at: container.countOffset)
        }
    }

    /// The container for an encoder's slot: a new one when the slot is empty, the same one when
    /// the encoder asks again (a subclass after its superclass).
    /// - Returns: The container's serial, or -1 after recording a failure.
    mutating func container(keyed: Bool, slot: Int) -> Int {
        if failure != nil { return -1 }
        if writer.count == slot {
            if pendingSlot == slot { pendingSlot = -1 }
            return push(keyed: keyed)
        }
        if let existing = open.last(where: { $0.countOffset == slot + 1 }), existing.keyed == keyed {
            return existing.serial
        }
        record(fail(.unsupported, "an encoder was asked for a \(keyed ? "keyed" : "unkeyed") container after it already encoded something else; use one kind of container per value"))
        return -1
    }

    /// A container nested as the next item of container `serial`.
    mutating func nestedContainer(keyed: Bool, in serial: Int, depth: Int, key: some CodingKey, writesKey: Bool) -> Int {
        guard beginKeyedItem(in: serial, depth: depth, key: key, writesKey: writesKey) else { return -1 }
        return push(keyed: keyed)
    }

    /// Starts the next item of container `serial` for `superEncoder()`.
    /// - Returns: The slot for the item's encoder, or -1 after recording a failure.
    mutating func superSlot(in serial: Int, depth: Int, key: some CodingKey, writesKey: Bool) -> Int {
        guard beginKeyedItem(in: serial, depth: depth, key: key, writesKey: writesKey) else { return -1 }
        pendingSlot = writer.count
        return writer.count
    }

    /// Starts the next item of container `serial` under `key`; `false` after recording a failure.
    private mutating func beginKeyedItem(in serial: Int, depth: Int, key: some CodingKey, writesKey: Bool) -> Bool {
        do {
            _ = try beginItem(serial)
        } catch {
            record(error)
            return false
        }
        if writesKey { writer.key(key) }
        setKey(key, at: depth)
        return true
    }

    /// Checks that a single value container's slot is still empty and at the end.
    @inline(__always)
    mutating func claim(_ slot: Int) throws(BinaryCodingError) {
        if let failure { throw failure }
        guard writer.count == slot else {
            throw fail(.unsupported, "a single value container was asked to encode a second value, or after its parent moved on; encode one value per container")
        }
        if pendingSlot == slot { pendingSlot = -1 }
    }

    private mutating func push(keyed: Bool) -> Int {
        let countOffset = writer.openContainer(keyed: keyed)
        let serial = nextSerial
        nextSerial += 1
        open.append(BinaryOpenContainer(serial: serial, countOffset: countOffset, keyed: keyed))
        return serial
    }
}
