/// The read position of a keyed container: types decode their keys in the order they were
/// encoded, so the next lookup usually finds its key at the cursor without a search.
struct BinaryKeyedCursor {
    /// The container this cursor belongs to.
    var serial: Int
    /// Index of the next entry.
    var next: Int
    /// Offset of the next entry's key; -1 while only `pendingValue`, the start of the entry
    /// before it, is known (the value's type did not read it to its end).
    var nextOffset: Int
    var pendingValue: Int
    /// The entry the last lookup found, and where its value starts.
    var found: Int
    var foundValue: Int

    static let unused = BinaryKeyedCursor(serial: -1, next: 0, nextOffset: -1, pendingValue: -1, found: -1, foundValue: -1)
}

/// What one `BinaryCodec.decode` call shares between its decoders and containers; reached
/// through ``BinaryDecodingState/core`` for the reason given at ``BinaryEncoderCore``.
struct BinaryDecoderCore {
    var reader: BinaryReader
    var path: [any CodingKey] = []
    /// Path length of the value being decoded, for errors thrown by the types themselves.
    var currentDepth = 0
    /// One keyed cursor per depth; a container whose cursor was replaced searches instead.
    var cursors: [BinaryKeyedCursor] = []
    var nextSerial = 0
    /// The extent of the value that most recently finished decoding to its end, so its parent
    /// can move past it without walking it again.
    var hintStart = -1
    var hintEnd = -1

    func codingPath(_ depth: Int) -> [any CodingKey] { Array(path.prefix(depth)) }

    /// Empties the state for the next message, keeping the arrays' capacity.
    mutating func reset() {
        reader = .empty
        path.removeAll(keepingCapacity: true)
        currentDepth = 0
        cursors.removeAll(keepingCapacity: true)
        nextSerial = 0
        hintStart = -1
        hintEnd = -1
    }

    /// Sets `path[depth]`, the key of the value about to be decoded at `depth + 1`.
    mutating func setKey(_ key: some CodingKey, at depth: Int) {
        if path.count > depth {
            path[depth] = key
        } else {
            while path.count < depth { path.append(BinaryIndexKey(-1)) }
            path.append(key)
        }
    }

    /// Records that the value at `start` ends at `end`.
    @inline(__always)
    mutating func finished(_ start: Int, end: Int) {
        hintStart = start
        hintEnd = end
    }

    /// The end of the value at `start` if a container recorded it, else -1.
    @inline(__always)
    func knownEnd(of start: Int) -> Int {
        hintStart == start ? hintEnd : -1
    }

    /// Adds the coding path to an error from the reader: the path of the container at `depth`,
    /// plus `key` when the error is about one of its items (not for ``BinaryNoKey``).
    func locate<K: CodingKey>(_ error: BinaryCodingError, depth: Int, key: K) -> BinaryCodingError {
        guard error.path == BinaryCodingError.unlocated else { return error }
        var keys = codingPath(depth)
        if K.self != BinaryNoKey.self { keys.append(key) }
        return BinaryCodingError(error.code, error.message, path: BinaryCodingError.path(keys))
    }

    mutating func newCursor(depth: Int, first: Int) -> Int {
        let serial = nextSerial
        nextSerial += 1
        var cursor = BinaryKeyedCursor.unused
        cursor.serial = serial
        cursor.nextOffset = first
        while cursors.count <= depth { cursors.append(.unused) }
        cursors[depth] = cursor
        return serial
    }

    /// Converts whatever a type's `init(from:)` threw.
    func convert(_ error: any Error) -> BinaryCodingError {
        switch error {
        case let error as BinaryCodingError:
            return error.path == BinaryCodingError.unlocated
                ? BinaryCodingError(error.code, error.message, path: BinaryCodingError.path(codingPath(currentDepth)))
                : error
        case DecodingError.dataCorrupted(let context):
            return BinaryCodingError(.dataCorrupted, "the type rejected the data: \(context.debugDescription)",
                                     path: BinaryCodingError.path(context.codingPath))
        case DecodingError.typeMismatch(_, let context):
            return BinaryCodingError(.typeMismatch, "the type rejected the data: \(context.debugDescription)",
                                     path: BinaryCodingError.path(context.codingPath))
        case DecodingError.keyNotFound(let key, let context):
            return BinaryCodingError(.keyNotFound, "no value for key '\(key.stringValue)': \(context.debugDescription)",
                                     path: BinaryCodingError.path(context.codingPath + [key]))
        case DecodingError.valueNotFound(_, let context):
            return BinaryCodingError(.valueNotFound, "the type rejected the data: \(context.debugDescription)",
                                     path: BinaryCodingError.path(context.codingPath))
        default:
            return BinaryCodingError(.failed, "the type's init(from:) threw: \(error)",
                                     path: BinaryCodingError.path(codingPath(currentDepth)))
        }
    }
}
