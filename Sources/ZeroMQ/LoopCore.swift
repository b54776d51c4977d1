internal import CZeroMQ
import DequeModule
import Foundation
import Glibc

/// Everything the loop thread owns. Before `start` only the starting thread touches it; after,
/// only the loop thread does — hence `@unchecked Sendable`.
final class LoopCore: @unchecked Sendable {
    let name: String
    let tickInterval: Duration
    let maxBatch: Int
    let mailbox: LoopMailbox
    // Touched on every send and receive: `@exclusivity(unchecked)`, since the runtime's
    // per-access bookkeeping cost time on each. Safe because nothing re-enters them while one is
    // being modified: the outbox retry closure touches only its socket, and delegate callbacks
    // run with no access held. Such an overlap would no longer trap.
    @exclusivity(unchecked) var sockets: [Socket] = []
    @exclusivity(unchecked) var outboxes: [Outbox] = []
    @exclusivity(unchecked) var delegate: (any IOLoopDelegate)?
    /// Runs Swift concurrency jobs on this thread (``LoopExecutor``).
    let executor: LoopExecutor
    /// Send failures waiting to be reported once the current callback returns.
    @exclusivity(unchecked) private var failures: [(SocketID, [[UInt8]], ZMQError)] = []
    /// How long the next poll may wait for outboxes: 1 ms while one moves (the zguide's
    /// EAGAIN-and-retry), until the end of the shortest pause while every one waits for a peer
    /// that takes nothing, `nil` while all are empty.
    private func outboxWait(_ clock: ContinuousClock) -> Int? {
        var wait: Int?
        for outbox in outboxes {
            switch outbox.due {
            case .never: continue
            case .nextTurn: return 1
            case .at(let instant): wait = min(wait ?? .max, milliseconds(until: instant, clock))
            }
        }
        return wait
    }
    /// ROUTER peers whose sends failed `EHOSTUNREACH`, by socket, since when. libzmq says so
    /// not only for a peer that is gone but for one whose queue was full a moment ago and has
    /// room again, until it processes the reader's notice (at most about once a millisecond
    /// while sends keep coming): such a send waits in the outbox and is retried, and only a
    /// peer still unreachable after ``unreachableGrace`` is reported (`sendFailed`).
    @exclusivity(unchecked) private var unreachableSince: [SocketID: [[UInt8]: ContinuousClock.Instant]] = [:]
    static let unreachableGrace = Duration.milliseconds(250)

    /// Whether a send to `peer` that failed with `error` should wait and be retried rather than
    /// be reported: `EHOSTUNREACH` on a ROUTER within the grace since the peer's first such failure.
    private func waitsOut(_ error: ZMQError, on socket: SocketID, peer: [UInt8]) -> Bool {
        guard error.isPeerUnreachable, sockets[socket].type == .router else { return false }
        let now = ContinuousClock.now
        guard let since = unreachableSince[socket, default: [:]][peer] else {
            unreachableSince[socket, default: [:]][peer] = now
            return true
        }
        // Past the grace the peer stays marked, so what else waits for it is reported at once,
        // until a send reaches it again; marks of peers nothing waits for are pruned.
        if now - since < Self.unreachableGrace { return true }
        if unreachableSince[socket, default: [:]].count > 1024 {
            unreachableSince[socket] = unreachableSince[socket]?.filter { now - $0.value < Self.unreachableGrace
                || outboxes[socket].pending(peer: $0.key) > 0 }
        }
        return false
    }

    /// A send to `peer` went through: it is reachable again.
    @inline(__always)
    private func reached(_ socket: SocketID, peer: [UInt8]?) {
        guard !unreachableSince.isEmpty, let peer, unreachableSince[socket]?.removeValue(forKey: peer) != nil else { return }
        if unreachableSince[socket]?.isEmpty == true { unreachableSince[socket] = nil }
    }

    /// Where draining starts next time, so one busy socket cannot starve the others.
    @exclusivity(unchecked) private var firstToDrain = 0
    /// What one turn received, handed to the delegate, then emptied in place: its room is kept
    /// from turn to turn instead of grown from one message each time (the growth of a large
    /// batch also made glibc consolidate its free lists, a few per cent of a busy loop).
    @exclusivity(unchecked) private var inbound: [Inbound] = []
    /// Set by ``replace(_:with:)``: the poll items must be rebuilt before the next poll.
    private var socketsReplaced = false

    init(name: String, tickInterval: Duration, maxBatch: Int, mailbox: LoopMailbox) {
        self.name = name
        self.tickInterval = tickInterval
        self.maxBatch = maxBatch
        self.mailbox = mailbox
        executor = LoopExecutor(mailbox: mailbox)
    }

    func add(_ socket: Socket) -> SocketID {
        sockets.append(socket)
        outboxes.append(Outbox(keyedByPeer: socket.type == .router))
        return sockets.count - 1
    }

    /// Closes the socket behind `id` (what waits in it is dropped, `LINGER` permitting), drops
    /// its outbox and puts `socket` in its place under the same id.
    func replace(_ id: SocketID, with socket: Socket) {
        precondition(sockets.indices.contains(id), "unknown SocketID \(id) in I/O loop \(name)")
        sockets[id].close()
        sockets[id] = socket
        outboxes[id] = Outbox(keyedByPeer: socket.type == .router)
        socketsReplaced = true
    }

    // MARK: Sending

    func send(_ socket: SocketID, _ frames: [[UInt8]]) {
        precondition(sockets.indices.contains(socket), "unknown SocketID \(socket) in I/O loop \(name)")
        if outboxes[socket].isBlocked(for: frames) {
            outboxes[socket].enqueue(frames)
            return
        }
        switch attempt(socket, frames) {
        case .sent: reached(socket, peer: frames.first)
        case .wouldBlock: outboxes[socket].enqueue(frames)
        case .failed(let error) where waitsOut(error, on: socket, peer: frames.first ?? []): outboxes[socket].enqueue(frames)
        case .failed(let error): failures.append((socket, frames, error))
        }
    }

    func send(_ socket: SocketID, peer: [UInt8], _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
              _ third: UnsafeRawBufferPointer) {
        precondition(sockets.indices.contains(socket), "unknown SocketID \(socket) in I/O loop \(name)")
        // Behind what already waits for the peer, copied once into its queue; else straight to
        // ZeroMQ from the borrowed memory, into the queue only when ZeroMQ's is full.
        if outboxes[socket].enqueueIfWaiting(peer: peer, first, second, third) { return }
        do {
            if try !sockets[socket].send(peer, first, second, third, dontWait: true) {
                outboxes[socket].enqueue(peer: peer, first, second, third)
            } else {
                reached(socket, peer: peer)
            }
        } catch where waitsOut(error, on: socket, peer: peer) {
            outboxes[socket].enqueue(peer: peer, first, second, third)
        } catch {
            failures.append((socket, [peer, Array(first), Array(second), Array(third)], error))
        }
    }

    private func attempt(_ socket: SocketID, _ frames: [[UInt8]]) -> SendAttempt {
        do {
            return try sockets[socket].send(frames, dontWait: true) ? .sent : .wouldBlock
        } catch {
            return .failed(error)
        }
    }

    private func retryOutboxes() {
        guard outboxes.contains(where: { !$0.isEmpty }) else { return }
        let now = ContinuousClock.now
        for id in outboxes.indices where !outboxes[id].isEmpty {
            let socket = sockets[id]
            let before = outboxes[id].count
            let failed = outboxes[id].retry(now: now) { frames in
                do throws(ZMQError) {
                    guard try socket.send(borrowed: frames, dontWait: true) else { return .wouldBlock }
                    if !unreachableSince.isEmpty, let peer = frames.first { reached(id, peer: Array(peer)) }
                    return .sent
                } catch where waitsOut(error, on: id, peer: frames.first.map { Array($0) } ?? []) {
                    return .wouldBlock
                } catch {
                    return .failed(error)
                }
            }
            failures.append(contentsOf: failed.map { (id, $0.0, $0.1) })
            if outboxes[id].count < before, let delegate { delegate.drained(id, io: LoopIO(core: self)) }
        }
    }

    /// Reports failures until none are left (a `sendFailed` handler may send and fail again).
    private func reportFailures() {
        while !failures.isEmpty, let delegate {
            let batch = failures
            failures.removeAll()
            for (socket, frames, error) in batch {
                delegate.sendFailed(socket, frames: frames, error: error, io: LoopIO(core: self))
            }
        }
    }

    // MARK: The loop

    func run() {
        // Linux keeps 15 bytes of a thread name and refuses longer ones.
        var threadName = ""
        for character in name {
            guard threadName.utf8.count + character.utf8.count <= 15 else { break }
            threadName.append(character)
        }
        Thread.current.name = threadName
        mailbox.runningOnThisThread()
        func pollItems() -> [zmq_pollitem_t] {
            sockets.map { zmq_pollitem_t(socket: $0.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0) }
                + [zmq_pollitem_t(socket: nil, fd: mailbox.wakeFD, events: Int16(ZMQ_POLLIN), revents: 0)]
        }
        var items = pollItems()
        let clock = ContinuousClock()
        var nextTick = clock.now.advanced(by: tickInterval)
        var backlog = false
        while true {
            if socketsReplaced {
                // A closed socket's handle must never reach zmq_poll. (The iteration that replaced
                // it may still drain the new socket on the old one's readiness: a non-blocking
                // receive that finds nothing.)
                items = pollItems()
                socketsReplaced = false
            }
            let untilTick = milliseconds(until: nextTick, clock)
            let timeout = backlog || mailbox.hasCommands ? 0 : min(outboxWait(clock) ?? untilTick, untilTick)
            if zmq_poll(&items, Int32(items.count), timeout) < 0 {
                let code = zmq_errno()
                if code == EINTR { continue }
                break  // ETERM: the context is gone, so are the sockets.
            }
            let woken = items[items.count - 1].revents & Int16(ZMQ_POLLIN) != 0
            let (commands, stopRequested) = mailbox.take(resettingWake: woken)
            deliver(commands)
            let (more, terminated) = drain(items, into: &inbound)
            backlog = more
            if !inbound.isEmpty {
                delegate?.received(inbound, io: LoopIO(core: self))
                // Emptied in place for the next turn, its room kept (the delegate kept no copy).
                inbound.removeAll(keepingCapacity: true)
                reportFailures()
            }
            // What this thread posted itself meanwhile (jobs of actors on ``LoopExecutor``, what
            // they sent) runs now rather than after another poll; bounded, so sockets keep their turn.
            var rounds = 0
            while rounds < 64, mailbox.hasCommands {
                deliver(mailbox.take(resettingWake: false).commands)
                rounds += 1
            }
            retryOutboxes()
            reportFailures()
            if clock.now >= nextTick {
                delegate?.tick(io: LoopIO(core: self))
                reportFailures()
                nextTick = clock.now.advanced(by: tickInterval)
            }
            if stopRequested || terminated { break }
        }
        finish()
    }

    /// Last commands, last chance for the delegate, one more flush; then the sockets close and
    /// `LINGER` takes over.
    private func finish() {
        deliver(mailbox.take(resettingWake: true).commands)
        delegate?.stopping(io: LoopIO(core: self))
        reportFailures()
        retryOutboxes()
        reportFailures()
        for socket in sockets { socket.close() }
        delegate = nil
        mailbox.retire(handingJobsTo: executor.runAfterLoop)
        mailbox.leavingThisThread()
    }

    private func deliver(_ commands: Deque<LoopCommand>) {
        guard !commands.isEmpty else { return }
        guard let delegate else {
            for case .job(let job) in commands { executor.run(job) }
            return
        }
        var messages: [Outbound] = []
        func flush() {
            guard !messages.isEmpty else { return }
            delegate.posted(messages, io: LoopIO(core: self))
            messages.removeAll()
            reportFailures()
        }
        for command in commands {
            switch command {
            case .message(let message):
                messages.append(message)
            case .run(let body):
                flush()
                body(LoopIO(core: self))
                reportFailures()
            case .job(let job):
                // What the job posts lands behind this take: no flush needed for order.
                executor.run(job)
                reportFailures()
            }
        }
        flush()
    }

    /// Bytes received per iteration at most (beyond the message that crosses it): with batches,
    /// a message count alone does not bound how long the delegate works before ticks run.
    static let maxBatchBytes = 4 << 20

    /// Receives from readable sockets, round-robin from `firstToDrain`, up to `maxBatch` messages
    /// or ``maxBatchBytes`` bytes.
    private func drain(_ items: [zmq_pollitem_t], into batch: inout [Inbound]) -> (more: Bool, terminated: Bool) {
        var bytes = 0
        let count = sockets.count
        guard count > 0 else { return (false, false) }
        defer { firstToDrain = (firstToDrain + 1) % count }
        for step in 0..<count {
            let id = (firstToDrain + step) % count
            guard items[id].revents & Int16(ZMQ_POLLIN) != 0 else { continue }
            while batch.count < maxBatch, bytes < Self.maxBatchBytes {
                do {
                    guard let inbound = try sockets[id].receiveInbound(dontWait: true, as: id) else { break }
                    let frames = inbound.frames
                    batch.append(inbound)
                    for frame in frames { bytes += frame.count }
                    // A peer that sends is usually reading too (a client keeps a window of
                    // requests): its queue is tried this turn, not after the pause a queue
                    // that took nothing waits. One lookup, only while something waits.
                    if !outboxes[id].isEmpty, let peer = frames.first { outboxes[id].retrySoon(onePeer: peer) }
                } catch {
                    if error.errno == ETERM { return (false, true) }
                    break
                }
            }
            if batch.count >= maxBatch || bytes >= Self.maxBatchBytes { return (true, false) }
        }
        return (false, false)
    }

    private func milliseconds(until deadline: ContinuousClock.Instant, _ clock: ContinuousClock) -> Int {
        let remaining = clock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
