import DequeModule
package import GroveWire

/// The answer a machine instance gave to a keyed event, kept to answer its repeats: the
/// reply's kind (`state`, or `accepted` for a no-wait event), its flags (binary, unhandled) and
/// payload, as they left the worker.
package struct KeptAnswer: Sendable, Hashable {
    package var kind: MessageKind
    package var flags: Header.Flags
    package var payload: [UInt8]

    package init(kind: MessageKind, flags: Header.Flags = [], payload: [UInt8] = []) {
        self.kind = kind
        self.flags = flags
        self.payload = payload
    }
}

/// One kept answer of an instance: its key, its place in the order the instance answered
/// keys (a store sorts by it), and the answer.
package struct AnswerEntry: Sendable, Hashable {
    package var key: IdempotencyKey
    package var slot: UInt64
    package var answer: KeptAnswer

    package init(key: IdempotencyKey, slot: UInt64, answer: KeptAnswer) {
        self.key = key
        self.slot = slot
        self.answer = answer
    }
}

/// The idempotency keys one instance applied lately, with their answers, and those whose event
/// is still running: what decides whether a keyed event is applied, answered with the first
/// answer, or waits for it (``admit(_:waiter:)``). A pure value: the instance that holds it
/// asks it and carries out what it says; its tests feed keys and read admissions.
///
/// Bounded: the last ``capacity`` keys answered, per instance, whatever client sent them (the
/// oldest goes first). A repeat of a key answered more than ``capacity`` keyed events of that
/// instance ago is applied again: retries must come back sooner. Durable instances keep the
/// window in their store, written in the commit of the state the answer reports
/// (``takeWrites(replacingStored:)``); the others keep it in memory only, lost with the worker.
package struct AnswerWindow<Waiter> {
    /// How many answered keys an instance keeps.
    package static var capacity: Int { 128 }

    /// What becomes of a keyed event.
    package enum Admission {
        /// A key not seen lately: apply the event; its answer is ``answered(_:with:)``'s to keep.
        case apply
        /// A repeat of a key applied already: answer with this, apply nothing.
        case answer(KeptAnswer)
        /// A repeat of a key whose event is still running: the waiter is answered with its
        /// answer when it comes (``answered(_:with:)`` returns it).
        case wait
    }

    private var kept: [IdempotencyKey: AnswerEntry] = [:]
    /// Keys answered, oldest first.
    private var order: Deque<IdempotencyKey> = []
    /// Keys whose event runs, with the repeats that wait for its answer.
    private var running: [IdempotencyKey: [Waiter]] = [:]
    private var nextSlot: UInt64 = 1
    /// Answered since the last write, and written ones that left the window since.
    private var unwritten: Set<IdempotencyKey> = []
    private var forgotten: [IdempotencyKey] = []

    package init() {}

    /// What to do with an event carrying `key`; `waiter` is kept when it must wait.
    package mutating func admit(_ key: IdempotencyKey, waiter: Waiter) -> Admission {
        if let entry = kept[key] { return .answer(entry.answer) }
        if running[key] != nil {
            running[key]!.append(waiter)
            return .wait
        }
        running[key] = []
        return .apply
    }

    /// The event of `key` was applied and answered `answer`: kept (the oldest key leaves past
    /// ``capacity``). Returns the repeats that waited for it, to answer the same.
    package mutating func answered(_ key: IdempotencyKey, with answer: KeptAnswer) -> [Waiter] {
        let waiters = running.removeValue(forKey: key) ?? []
        guard kept[key] == nil else { return waiters }
        kept[key] = AnswerEntry(key: key, slot: nextSlot, answer: answer)
        nextSlot += 1
        order.append(key)
        unwritten.insert(key)
        while order.count > Self.capacity {
            let oldest = order.removeFirst()
            kept[oldest] = nil
            // One never written needs no deletion.
            if unwritten.remove(oldest) == nil { forgotten.append(oldest) }
        }
        return waiters
    }

    /// The event of `key` was not applied (refused, or failed before it ran): nothing is kept,
    /// a later repeat is applied. Returns the repeats that waited for it, to answer the same.
    package mutating func refused(_ key: IdempotencyKey) -> [Waiter] {
        running.removeValue(forKey: key) ?? []
    }

    /// Takes back what a store kept for the instance (any order): the window then answers
    /// those keys' repeats, and nothing of them is written again.
    package mutating func restore(_ entries: [AnswerEntry]) {
        for entry in entries.sorted(by: { $0.slot < $1.slot }).suffix(Self.capacity) where kept[entry.key] == nil {
            kept[entry.key] = entry
            order.append(entry.key)
            nextSlot = max(nextSlot, entry.slot + 1)
        }
    }

    /// What the store must write for the window since the last call: answers to insert, keys to
    /// delete. With `replacingStored` (the store drops what it holds for the instance first),
    /// every answer kept.
    package mutating func takeWrites(replacingStored: Bool = false) -> (answers: [AnswerEntry], forgotten: [IdempotencyKey]) {
        let keys = replacingStored ? Array(order) : order.filter { unwritten.contains($0) }
        unwritten = []
        let gone = replacingStored ? [] : forgotten
        forgotten = []
        return (keys.compactMap { kept[$0] }, gone)
    }

    /// Whether anything waits to be written.
    package var hasWrites: Bool { !unwritten.isEmpty || !forgotten.isEmpty }

    /// How many answers it keeps.
    package var count: Int { order.count }
}
