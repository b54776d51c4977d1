import DequeModule

/// The outcome of one non-blocking send attempt.
enum SendAttempt {
    case sent
    case wouldBlock
    case failed(ZMQError)
}

/// Messages a socket could not queue yet, retried in order. A ROUTER keeps one queue per peer
/// (frame 0); other sockets one queue under the empty key.
struct Outbox {
    private let keyedByPeer: Bool
    /// Only non-empty queues are kept, so retrying visits only peers with work.
    private var queues: [[UInt8]: Deque<[[UInt8]]>] = [:]
    private(set) var count = 0

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
        count == 0 ? 0 : queues[keyedByPeer ? peer : []]?.count ?? 0
    }

    mutating func enqueue(_ frames: [[UInt8]]) {
        queues[key(frames), default: []].append(frames)
        count += 1
    }

    mutating func drop(peer: [UInt8]) -> [[[UInt8]]] {
        guard let dropped = queues.removeValue(forKey: keyedByPeer ? peer : []) else { return [] }
        count -= dropped.count
        return Array(dropped)
    }

    /// Retries every queue from its head until a send would block. Messages that fail for another
    /// reason are removed and returned.
    mutating func retry(_ attempt: ([[UInt8]]) -> SendAttempt) -> [([[UInt8]], ZMQError)] {
        var failures: [([[UInt8]], ZMQError)] = []
        for key in Array(queues.keys) {
            guard var queue = queues.removeValue(forKey: key) else { continue }
            drain: while let head = queue.first {
                switch attempt(head) {
                case .sent:
                    break
                case .wouldBlock:
                    break drain
                case .failed(let error):
                    failures.append((head, error))
                }
                queue.removeFirst()
                count -= 1
            }
            if !queue.isEmpty { queues[key] = queue }
        }
        return failures
    }

    private func key(_ frames: [[UInt8]]) -> [UInt8] {
        keyedByPeer ? (frames.first ?? []) : []
    }
}
