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
/// Bounded: the answers of the last ``capacity`` keys answered, per instance, whatever client
/// sent them (the oldest goes first). Past its answer, a repeat is still told from a new event by
/// its client's ``ClientSequences`` (``maximumClients`` clients of the instance, shared among
/// their senders: ``forgetOne(toMakeRoomFor:)``): it is refused as applied already, or as too
/// old to tell, and never applied twice. Durable instances keep the window in their store,
/// written in the commit of the state the answer reports (``takeWrites(replacingStored:)``);
/// the others keep it in memory only, lost with the worker.
///
/// A client's sequences travel to the store as one more entry of that client, under sequence 0
/// (a key never has it: ``IdempotencyKey/split(_:correlation:)`` refuses it), whose answer's
/// payload is ``ClientSequences/encoded`` and whose slot orders the clients by last use. So a
/// store keeps them as any other entry, in the same rows and the same commit.
package struct AnswerWindow<Waiter> {
    /// How many answered keys an instance keeps with their answers.
    package static var capacity: Int { 128 }
    /// How many bytes of answers' payloads an instance keeps, whatever their number: the oldest
    /// go past it, and an answer larger than it alone is not kept (its repeats are refused
    /// `already-applied`). So a machine with a large state keeps fewer answers, not 128 states.
    package static var maximumBytes: Int { 256 * 1024 }
    /// How many clients' sequences an instance keeps (past it one goes: a sender's least lately
    /// used, the sender chosen as ``forgetOne(toMakeRoomFor:)`` says; a repeat from a client it
    /// forgot is applied again).
    package static var maximumClients: Int { 1_000 }

    /// What becomes of a keyed event.
    package enum Admission {
        /// A key not seen lately: apply the event; its answer is ``answered(_:with:)``'s to keep.
        case apply
        /// A repeat of a key applied already: answer with this, apply nothing.
        case answer(KeptAnswer)
        /// A repeat of a key whose event is still running: the waiter is answered with its
        /// answer when it comes (``answered(_:with:)`` returns it).
        case wait
        /// A repeat of a key applied already whose answer is no longer kept: apply nothing,
        /// say so (`already-applied`).
        case appliedEarlier
        /// A key under what its client's sequences still tell (``ClientSequences/floor``):
        /// applied or not, it cannot be told; apply nothing, say so (`key-too-old`).
        case tooOld
    }

    /// One client's sequences, and when the instance last applied one of them.
    private struct Book {
        var sequences = ClientSequences()
        var lastUse: UInt64
    }

    private var kept: [IdempotencyKey: AnswerEntry] = [:]
    /// Keys answered, oldest first.
    private var order: Deque<IdempotencyKey> = []
    /// Keys whose event runs, with the repeats that wait for its answer.
    private var running: [IdempotencyKey: [Waiter]] = [:]
    private var nextSlot: UInt64 = 1
    /// The payload bytes of the answers kept.
    private var keptBytes = 0
    /// Answered since the last write, and written ones that left the window since.
    private var unwritten: Set<IdempotencyKey> = []
    private var forgotten: [IdempotencyKey] = []
    /// Each client's sequences, by client id.
    private var books: [[UInt8]: Book] = [:]
    private var nextUse: UInt64 = 1
    /// Clients whose sequences changed since the last write, and forgotten ones written before.
    private var unwrittenBooks: Set<[UInt8]> = []
    private var forgottenBooks: [[UInt8]] = []
    /// How many books each sender has (``IdempotencyKey/sender(ofKept:)``): counted when the
    /// window is first full, and kept from then on; nil before, so that an instance with fewer
    /// than ``maximumClients`` clients (nearly all) pays nothing for it.
    private var booksBySender: [[UInt8]: Int]?

    package init() {}

    /// What to do with an event carrying `key`; `waiter` is kept when it must wait.
    package mutating func admit(_ key: IdempotencyKey, waiter: Waiter) -> Admission {
        if let entry = kept[key] { return .answer(entry.answer) }
        if running[key] != nil {
            running[key]!.append(waiter)
            return .wait
        }
        switch books[key.client]?.sequences.verdict(of: key.sequence) ?? .new {
        case .new:
            running[key] = []
            return .apply
        case .applied:
            return .appliedEarlier
        case .unknown:
            return .tooOld
        }
    }

    /// The event of `key` was applied and answered `answer`: kept (the oldest key leaves past
    /// ``capacity``). Returns the repeats that waited for it, to answer the same.
    package mutating func answered(_ key: IdempotencyKey, with answer: KeptAnswer) -> [Waiter] {
        let waiters = running.removeValue(forKey: key) ?? []
        guard kept[key] == nil else { return waiters }
        noteApplied(key)
        guard answer.payload.count <= Self.maximumBytes else { return waiters }
        keep(AnswerEntry(key: key, slot: nextSlot, answer: answer))
        nextSlot += 1
        unwritten.insert(key)
        return waiters
    }

    /// Keeps `entry`, the newest; the oldest go past ``capacity`` or ``maximumBytes``.
    private mutating func keep(_ entry: AnswerEntry) {
        kept[entry.key] = entry
        order.append(entry.key)
        keptBytes += entry.answer.payload.count
        while order.count > Self.capacity || keptBytes > Self.maximumBytes {
            let oldest = order.removeFirst()
            keptBytes -= kept.removeValue(forKey: oldest)?.answer.payload.count ?? 0
            // One never written needs no deletion.
            if unwritten.remove(oldest) == nil { forgotten.append(oldest) }
        }
    }

    /// The event of `key` was not applied (refused, or failed before it ran): nothing is kept,
    /// a later repeat is applied. Returns the repeats that waited for it, to answer the same.
    package mutating func refused(_ key: IdempotencyKey) -> [Waiter] {
        running.removeValue(forKey: key) ?? []
    }

    /// Takes back what a store kept for the instance (any order): the window then answers
    /// those keys' repeats, and nothing of them is written again.
    package mutating func restore(_ entries: [AnswerEntry]) {
        for entry in entries where entry.key.sequence == Self.sequencesMark && books[entry.key.client] == nil {
            // Sequences that cannot be read are left out: the answers kept still tell their
            // repeats, and the client's next write replaces them.
            guard let read = ClientSequences(encoded: entry.answer.payload) else { continue }
            books[entry.key.client] = Book(sequences: read, lastUse: entry.slot)
            nextUse = max(nextUse, entry.slot + 1)
            // Counted again, with the books read back, when next needed.
            booksBySender = nil
        }
        let answers = entries.filter { $0.key.sequence != Self.sequencesMark }
        // Kept as when they were answered (a store written before ``maximumBytes`` may hold
        // more: the oldest are then let go, and deleted at the next write).
        for entry in answers.sorted(by: { $0.slot < $1.slot }).suffix(Self.capacity) where kept[entry.key] == nil {
            keep(entry)
            nextSlot = max(nextSlot, entry.slot + 1)
        }
    }

    /// What the store must write for the window since the last call: answers to insert, keys to
    /// delete. With `replacingStored` (the store drops what it holds for the instance first),
    /// every answer kept.
    package mutating func takeWrites(replacingStored: Bool = false) -> (answers: [AnswerEntry], forgotten: [IdempotencyKey]) {
        let keys = replacingStored ? Array(order) : order.filter { unwritten.contains($0) }
        let clients = replacingStored ? Array(books.keys) : Array(unwrittenBooks)
        unwritten = []
        unwrittenBooks = []
        let gone = replacingStored ? [] : forgotten + forgottenBooks.map { IdempotencyKey(client: $0, sequence: Self.sequencesMark) }
        forgotten = []
        forgottenBooks = []
        let sequences = clients.compactMap { client in
            books[client].map { book in
                AnswerEntry(key: IdempotencyKey(client: client, sequence: Self.sequencesMark), slot: book.lastUse,
                            answer: KeptAnswer(kind: .state, payload: book.sequences.encoded))
            }
        }
        return (keys.compactMap { kept[$0] } + sequences, gone)
    }

    /// Whether anything waits to be written.
    package var hasWrites: Bool { !unwritten.isEmpty || !forgotten.isEmpty || !unwrittenBooks.isEmpty || !forgottenBooks.isEmpty }

    /// The sequence under which a client's ``ClientSequences`` are stored: no key has it.
    package static var sequencesMark: UInt64 { IdempotencyKey.reservedSequence }

    /// `key` was applied: its client's sequences say so. A new client past ``maximumClients``
    /// makes one client be forgotten (``forgetOne(toMakeRoomFor:)``).
    private mutating func noteApplied(_ key: IdempotencyKey) {
        if books[key.client] == nil {
            if books.count >= Self.maximumClients { forgetOne(toMakeRoomFor: key.client) }
            booksBySender?[Array(IdempotencyKey.sender(ofKept: key.client)), default: 0] += 1
        }
        books[key.client, default: Book(lastUse: nextUse)].sequences.applied(key.sequence)
        books[key.client]!.lastUse = nextUse
        nextUse += 1
        unwrittenBooks.insert(key.client)
    }

    /// Forgets one client's sequences to make room for `newcomer`'s: the least lately used of
    /// its own sender's when that sender has as many books as any other, else the least lately
    /// used of the senders with the most. So a sender (a client key: issue 34) that makes client
    /// ids without end forgets only its own, and takes a book from another sender only when that
    /// one has more than it and at least as many as every other: `n` senders share the books
    /// evenly at worst, and a sender with at most ``maximumClients``/`n` of them keeps them all.
    /// With one sender (no CURVE, or one client key) it is the least lately used client, as
    /// plain LRU. Costs a pass over the books, as that did.
    private mutating func forgetOne(toMakeRoomFor newcomer: [UInt8]) {
        if booksBySender == nil {
            var counts: [[UInt8]: Int] = [:]
            for client in books.keys { counts[Array(IdempotencyKey.sender(ofKept: client)), default: 0] += 1 }
            booksBySender = counts
        }
        guard let oldest = leastLatelyUsed(giving: senders(givingTo: newcomer)) else { return }
        // Written or not, its row goes: a client's sequences are written again and again.
        books[oldest] = nil
        unwrittenBooks.remove(oldest)
        forgottenBooks.append(oldest)
        let owner = Array(IdempotencyKey.sender(ofKept: oldest))
        if let left = booksBySender?[owner], left > 1 { booksBySender?[owner] = left - 1 } else { booksBySender?[owner] = nil }
    }

    /// The senders one of which gives a book up for `newcomer`'s: its own sender when that one
    /// has as many books as any other, else those with the most.
    private func senders(givingTo newcomer: [UInt8]) -> Set<[UInt8]> {
        let counts = booksBySender ?? [:]
        let sender = Array(IdempotencyKey.sender(ofKept: newcomer))
        let most = counts.values.max() ?? 0
        return (counts[sender] ?? 0) >= most ? [sender] : Set(counts.filter { $0.value == most }.keys)
    }

    /// The client least lately used among those of `senders`.
    private func leastLatelyUsed(giving senders: Set<[UInt8]>) -> [UInt8]? {
        // One sender (nearly always): its bytes compared in place, nothing allocated per client.
        let only = senders.count == 1 ? senders.first : nil
        var oldest: (client: [UInt8], lastUse: UInt64)?
        for (client, book) in books where book.lastUse < (oldest?.lastUse ?? .max) {
            let owner = IdempotencyKey.sender(ofKept: client)
            guard only.map({ owner.elementsEqual($0) }) ?? senders.contains(Array(owner)) else { continue }
            oldest = (client, book.lastUse)
        }
        return oldest?.client
    }

    /// How many answers it keeps.
    package var count: Int { order.count }
}
