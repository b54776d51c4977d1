import Grove
import GroveWire
import Synchronization

/// Where a keyed event's answer is kept once it leaves: the instance that ran it
/// (``AnswerWindow``). A ``StateReply`` for a keyed event carries one.
protocol AnswerKeeper: AnyObject, Sendable {
    /// What becomes of an event carrying `key`; `reply` waits when its first copy still runs.
    func admit(_ key: IdempotencyKey, reply: StateReply) -> AnswerWindow<StateReply>.Admission
    /// The event of `key` ran and was answered `answer`: kept (written with the instance's next
    /// commit when durable); returns the repeats that waited, to answer the same.
    func answered(_ key: IdempotencyKey, with answer: KeptAnswer) -> [StateReply]
    /// The event of `key` did not run: nothing is kept; returns the repeats that waited.
    func refused(_ key: IdempotencyKey) -> [StateReply]
    /// Takes back the answers its store kept (a durable instance coming back).
    func restoreAnswers(_ entries: [AnswerEntry])
    /// It came back from its store: its kept answers are to be read before its first keyed
    /// event is admitted.
    func answersInStore()
    /// Whether its kept answers are still to be read from the store; true once.
    func answersUnread() -> Bool
}

/// An instance's ``AnswerWindow`` out of line: instances that never get a keyed event (most)
/// keep a nil reference, not a window's six words. Used under its instance's lock only.
final class AnswerBook {
    var window = AnswerWindow<StateReply>()
}

/// A reply's link to the window its answer is kept in.
struct KeyedReply: Sendable {
    let key: IdempotencyKey
    let keeper: any AnswerKeeper
}

extension Hosted {
    func admit(_ key: IdempotencyKey, reply: StateReply) -> AnswerWindow<StateReply>.Admission {
        answers.withLock { book in
            let book = book ?? { book = AnswerBook(); return book! }()
            return book.window.admit(key, waiter: reply)
        }
    }

    func answered(_ key: IdempotencyKey, with answer: KeptAnswer) -> [StateReply] {
        let waiters = answers.withLock { $0?.window.answered(key, with: answer) ?? [] }
        // The answer is written in the commit of the state it reports, before it leaves.
        changed()
        return waiters
    }

    func refused(_ key: IdempotencyKey) -> [StateReply] {
        answers.withLock { $0?.window.refused(key) ?? [] }
    }

    func restoreAnswers(_ entries: [AnswerEntry]) {
        guard !entries.isEmpty else { return }
        answers.withLock { book in
            let book = book ?? { book = AnswerBook(); return book! }()
            book.window.restore(entries)
        }
    }

    func answersInStore() {
        storedAnswers.store(true, ordering: .relaxed)
    }

    func answersUnread() -> Bool {
        storedAnswers.load(ordering: .relaxed) && storedAnswers.exchange(false, ordering: .relaxed)
    }

    /// `write` with the answers kept and let go since the last write (all of them when the
    /// write replaces what the store holds for the instance).
    func withAnswers(_ write: DurableWrite) -> DurableWrite {
        var write = write
        let taken = answers.withLock { $0?.window.takeWrites(replacingStored: write.replacesStored) }
        write.answers = taken?.answers ?? []
        write.forgottenAnswers = taken?.forgotten ?? []
        return write
    }
}

extension StateReply {
    /// Answers with a kept answer: a repeat of a keyed event applied already.
    func resend(_ answer: KeptAnswer) {
        link.send(answer.kind, flags: answer.flags, correlation: correlation, address: address, payload: answer.payload)
    }

    /// A keyed event's answer, `kind` with `flags` and `payload`: kept by its instance, then
    /// sent to this sender and to the repeats that waited for it.
    func keep(_ keyed: KeyedReply, _ kind: MessageKind, flags: Header.Flags, payload: [UInt8]) {
        let answer = KeptAnswer(kind: kind, flags: flags, payload: payload)
        for reply in [self] + keyed.keeper.answered(keyed.key, with: answer) { reply.resend(answer) }
    }

    /// A keyed event that did not run: nothing kept; this sender and the repeats that waited
    /// get `error`.
    func refuse(_ keyed: KeyedReply, _ error: WireError) {
        for reply in [self] + keyed.keeper.refused(keyed.key) {
            reply.link.send(WireMessage.error(error, correlation: reply.correlation, address: reply.address))
        }
    }
}
