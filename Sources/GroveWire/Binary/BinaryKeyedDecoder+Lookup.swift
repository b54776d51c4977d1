/// Finding keys: first at the cursor (keys are usually read in the order they were written),
/// then by a walk over the entries.
extension BinaryKeyedDecoder {
    /// Where the value for `key` starts; throws `keyNotFound` when the container has no such key.
    func require(_ key: some CodingKey) throws(BinaryCodingError) -> Int {
        let found: Int?
        do {
            found = try lookup(key)
        } catch {
            throw state.core.locate(error, depth: depth, key: key)
        }
        guard let found else { throw keyNotFound(key) }
        return found
    }

    /// Where the value for `key` starts, or nil when the container has no such key.
    func lookup(_ key: some CodingKey) throws(BinaryCodingError) -> Int? {
        let reader = state.core.reader
        let ownsCursor = state.core.cursors[depth].serial == serial
        if ownsCursor {
            let cursor = state.core.cursors[depth]
            if cursor.next < count {
                var offset = cursor.nextOffset
                if offset < 0 {
                    offset = state.core.knownEnd(of: cursor.pendingValue)
                    if offset < 0 { offset = try reader.skip(from: cursor.pendingValue, depth: depth + 1) }
                    state.core.cursors[depth].nextOffset = offset
                }
                if try matches(key, reader.key(&offset)) {
                    state.core.cursors[depth].found = cursor.next
                    state.core.cursors[depth].foundValue = offset
                    return offset
                }
            }
        }
        var offset = first
        for index in 0 ..< count {
            if try matches(key, reader.key(&offset)) {
                if ownsCursor {
                    state.core.cursors[depth].found = index
                    state.core.cursors[depth].foundValue = offset
                }
                return offset
            }
            if index + 1 < count { offset = try reader.skip(from: offset, depth: depth + 1) }
        }
        return nil
    }

    /// Moves the cursor past the entry whose value starts at `value` (the one just looked up),
    /// and reports this container's end once its last entry is read.
    /// - Parameter end: The offset past the value, or -1 when unknown.
    func advance(past value: Int, end: Int) {
        guard state.core.cursors[depth].serial == serial else { return }
        var cursor = state.core.cursors[depth]
        guard cursor.foundValue == value else { return }
        cursor.next = cursor.found + 1
        if end >= 0 {
            cursor.nextOffset = end
            if cursor.next == count { state.core.finished(start, end: end) }
        } else {
            cursor.nextOffset = -1
            cursor.pendingValue = value
        }
        state.core.cursors[depth] = cursor
    }

    private func matches(_ key: some CodingKey, _ entry: BinaryEntryKey) -> Bool {
        switch entry {
        case .int(let value):
            // Integer keys were written for keys whose stringValue is their decimal intValue.
            if key.intValue == value { return true }
            return key.stringValue == String(value)
        case .string(let keyStart, let length):
            return state.core.reader.utf8(start: keyStart, count: length, equals: key.stringValue)
        }
    }

    private func keyNotFound(_ key: some CodingKey) -> BinaryCodingError {
        let present = allKeys.prefix(8).map { "'\($0.stringValue)'" }.joined(separator: ", ")
        let message = "no value for key '\(key.stringValue)' (present: \(present.isEmpty ? "none" : present)); "
            + "make the property optional or check that sender and receiver use the same version of the type"
        var keys = codingPath
        keys.append(key)
        return BinaryCodingError(.keyNotFound, message, path: BinaryCodingError.path(keys))
    }
}
