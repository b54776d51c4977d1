import DequeModule

/// The outcome of one non-blocking send attempt.
enum SendAttempt {
    case sent
    case wouldBlock
    case failed(ZMQError)
}

/// What waits in an outbox for one peer: messages, and their bytes (every frame's, frame 0 too).
package struct Backlog: Sendable, Equatable {
    /// Messages waiting.
    package var messages: Int
    /// Their bytes, all frames together.
    package var bytes: Int

    /// - Parameters:
    ///   - messages: Messages waiting.
    ///   - bytes: Their bytes.
    package init(messages: Int, bytes: Int) {
        self.messages = messages
        self.bytes = bytes
    }

    /// Nothing waits.
    package static let empty = Backlog(messages: 0, bytes: 0)
}

/// Messages a socket could not queue yet, retried in order. A ROUTER keeps one queue per peer
/// (frame 0); other sockets one queue under the empty key. Each queue counts its bytes, so a
/// caller can bound what one peer makes this process hold in bytes as well as in messages.
///
/// ZeroMQ does not say when one peer of a ROUTER can take more (its `POLLOUT` means "some peer
/// can"), so a queue is retried on a schedule: every turn while it moves, and after an attempt
/// in which nothing left, only after a pause that doubles from ``RetryPause/first`` up to
/// ``RetryPause/longest`` until something leaves again. A peer that stopped reading thus costs
/// a few attempts a second, not one per loop turn.
struct Outbox {
    private struct Queue {
        var messages: Deque<[[UInt8]]> = []
        var bytes = 0
        /// When the queue is tried again; `nil`: at the next retry.
        var retryAt: ContinuousClock.Instant?
        /// The pause after the last attempt in which nothing left; zero while the queue moves.
        var pause: Duration = .zero

        mutating func append(_ frames: [[UInt8]], size: Int) {
            messages.append(frames)
            bytes += size
        }
    }

    /// The pauses between attempts for a queue whose peer takes nothing.
    enum RetryPause {
        static let first = Duration.milliseconds(1)
        static let longest = Duration.milliseconds(64)
    }

    private let keyedByPeer: Bool
    /// Only non-empty queues are kept, so retrying visits only peers with work.
    private var queues: [[UInt8]: Queue] = [:]
    private(set) var count = 0
    /// The bytes of every message waiting, all peers together.
    private(set) var byteCount = 0

    init(keyedByPeer: Bool) {
        self.keyedByPeer = keyedByPeer
    }

    var isEmpty: Bool { count == 0 }

    /// Whether messages are already waiting where `frames` would go, so it must queue behind them.
    func isBlocked(for frames: [[UInt8]]) -> Bool {
        // Nearly always empty: no hashing of the peer's id on every send.
        count > 0 && queues[key(frames)] != nil
    }

    /// ``isBlocked(for:)`` for a message whose frame 0 is `peer`.
    func isBlocked(forPeer peer: [UInt8]) -> Bool {
        count > 0 && queues[keyedByPeer ? peer : []] != nil
    }

    func pending(peer: [UInt8]) -> Int {
        count == 0 ? 0 : queues[keyedByPeer ? peer : []]?.messages.count ?? 0
    }

    /// The messages and bytes waiting for `peer`.
    func backlog(peer: [UInt8]) -> Backlog {
        guard count > 0, let queue = queues[keyedByPeer ? peer : []] else { return .empty }
        return Backlog(messages: queue.messages.count, bytes: queue.bytes)
    }

    mutating func enqueue(_ frames: [[UInt8]]) {
        let size = Self.size(of: frames)
        // A new queue is tried at the next turn; one that waits keeps its schedule.
        let key = key(frames)
        if queues[key] == nil { due = .nextTurn }
        queues[key, default: Queue()].append(frames, size: size)
        count += 1
        byteCount += size
    }

    mutating func drop(peer: [UInt8]) -> [[[UInt8]]] {
        guard let dropped = queues.removeValue(forKey: keyedByPeer ? peer : []) else { return [] }
        count -= dropped.messages.count
        byteCount -= dropped.bytes
        if count == 0 { due = .never }
        return Array(dropped.messages)
    }

    /// When the next retry is due.
    enum Due: Equatable {
        /// Nothing waits.
        case never
        /// A queue moved, or just started: at the next loop turn.
        case nextTurn
        /// Every queue waits out a pause; the earliest ends then.
        case at(ContinuousClock.Instant)
    }

    /// When ``retry(now:_:)`` has something to try.
    private(set) var due = Due.never

    /// Makes every queue (or only `peer`'s) due at the next retry, as when its peer is known to
    /// read again.
    mutating func retrySoon(peer: [UInt8]? = nil) {
        guard count > 0 else { return }
        var index = queues.values.startIndex
        while index != queues.values.endIndex {
            if peer == nil || queues.keys[index] == (keyedByPeer ? peer! : []) {
                queues.values[index].retryAt = nil
                queues.values[index].pause = .zero
            }
            queues.values.formIndex(after: &index)
        }
        due = .nextTurn
    }

    /// Retries each queue that is due at `now` from its head until a send would block (see the
    /// schedule above). Messages that fail for another reason are removed and returned.
    mutating func retry(now: ContinuousClock.Instant, _ attempt: ([[UInt8]]) -> SendAttempt) -> [([[UInt8]], ZMQError)] {
        var failures: [([[UInt8]], ZMQError)] = []
        var emptied = false
        var moved = false
        var earliest: ContinuousClock.Instant?
        // In place: a loop turn with a blocked peer (a client reading slower than it sends) makes
        // no copy of the keys and moves no queue out of the table and back.
        var index = queues.values.startIndex
        while index != queues.values.endIndex {
            if let due = queues.values[index].retryAt, due > now {
                earliest = min(earliest ?? due, due)
                queues.values.formIndex(after: &index)
                continue
            }
            var left = false
            drain: while let head = queues.values[index].messages.first {
                switch attempt(head) {
                case .sent:
                    break
                case .wouldBlock:
                    break drain
                case .failed(let error):
                    failures.append((head, error))
                }
                let size = Self.size(of: head)
                queues.values[index].messages.removeFirst()
                queues.values[index].bytes -= size
                count -= 1
                byteCount -= size
                left = true
            }
            if queues.values[index].messages.isEmpty {
                emptied = true
            } else if left {
                // It moves: at the next turn again.
                queues.values[index].pause = .zero
                queues.values[index].retryAt = nil
                moved = true
            } else {
                let pause = queues.values[index].pause
                queues.values[index].pause = pause == .zero ? RetryPause.first : min(pause * 2, RetryPause.longest)
                let due = now.advanced(by: queues.values[index].pause)
                queues.values[index].retryAt = due
                earliest = min(earliest ?? due, due)
            }
            queues.values.formIndex(after: &index)
        }
        if emptied { queues = queues.filter { !$0.value.messages.isEmpty } }
        due = count == 0 ? .never : moved ? .nextTurn : earliest.map(Due.at) ?? .nextTurn
        return failures
    }

    private func key(_ frames: [[UInt8]]) -> [UInt8] {
        keyedByPeer ? (frames.first ?? []) : []
    }

    private static func size(of frames: [[UInt8]]) -> Int {
        frames.reduce(0) { $0 + $1.count }
    }
}
