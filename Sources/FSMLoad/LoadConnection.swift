import Foundation
import GroveClient
import GroveCluster
@_spi(GroveInternal) import GroveWire
import Histogram
import ZeroMQ

/// What one run sends: the kind, the flags and the payloads, and to which addresses.
struct LoadPlan: Sendable {
    enum Mode: String, Sendable, CaseIterable {
        /// `echo`: through coordinator and worker and back, no codec, no machine.
        case raw
        /// `event` with the no-wait flag: acknowledged once the machine took it (queued, or
        /// handled at once by an idle machine).
        case ack
        /// `event`: answered with the state it committed.
        case reply
    }

    var mode: Mode
    var addresses: [String]
    var payload: [UInt8]
    var window: Int
    var count: Int?
    var duration: Duration
    var ratePerConnection: Double?
    /// Events per ZeroMQ message (1: no batching).
    var batch: Int = 1
    /// With a rate: how long an event that fell due may be held so that more leave in one message.
    var linger: Duration = .zero
    /// Payloads in GroveWire's binary codec instead of JSON.
    var binary = false
    /// Every event with an idempotency key, sent again with it when lost (``LoadRetries``).
    var retry = false

    var kind: MessageKind { mode == .raw ? .echo : .event }
    var flags: Header.Flags {
        var flags: Header.Flags = mode == .ack ? .noWait : []
        if binary, mode != .raw { flags.insert(.binary) }
        if retry, mode != .raw { flags.insert(.keyed) }
        return flags
    }
}

/// The outcome of one connection's run.
struct ConnectionResult: Sendable {
    var sent = 0
    /// ZeroMQ messages those events left in.
    var messages = 0
    var acknowledged = 0
    var failed = 0
    /// With `--retry`: copies sent again with their event's key (not counted in `sent`).
    var resent = 0
    /// On the direct road: how often the connection asked the coordinator where the machine
    /// lives now, after a leg was told its worker no longer serves it.
    var relocations = 0
    /// With `--retry`: events whose copy was answered `already-applied` (counted acknowledged:
    /// the first copy was applied, its answer lost with a worker and no longer kept).
    var appliedEarlier = 0
    var errors: [String: Int] = [:]
    var latency = Histogram<UInt64>(highestTrackableValue: 60_000_000) // microseconds, up to 60 s
    var elapsed: Duration = .zero

    mutating func merge(_ other: ConnectionResult) {
        sent += other.sent
        messages += other.messages
        acknowledged += other.acknowledged
        failed += other.failed
        resent += other.resent
        relocations += other.relocations
        appliedEarlier += other.appliedEarlier
        errors.merge(other.errors, uniquingKeysWith: +)
        latency.add(other.latency)
        elapsed = max(elapsed, other.elapsed)
    }
}

/// One client connection on its own thread: keeps up to `window` requests in flight (or sends at
/// a fixed rate), and records each round trip. A request is counted once, as acknowledged or as
/// failed; what is neither when the drain deadline passes is lost. On the direct road the
/// connection has a socket per worker (its legs, ``LoadLegs``), sent to and read from by this one
/// thread.
final class LoadConnection: @unchecked Sendable {
    let legs: LoadLegs
    let plan: LoadPlan
    let index: Int
    let progress: Progress

    final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var done = 0
        func add(_ count: Int) { lock.lock(); done += count; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return done }
    }

    let context: ZMQContext
    /// The plan's addresses, laid out before the run's clock starts (``AddressArena``).
    let addresses: AddressArena

    init(context: ZMQContext, legs: LoadLegs, plan: LoadPlan, index: Int, progress: Progress) {
        self.context = context
        addresses = AddressArena(plan.addresses)
        self.legs = legs
        self.plan = plan
        self.index = index
        self.progress = progress
    }

    /// A DEALER to `leg`'s endpoint, with the run's high-water marks.
    func open(_ leg: LoadLegs.Leg) throws -> Socket {
        try ClientEndpoint.verify(leg.endpoint, curve: leg.credentials != nil)
        let socket = try Socket(context, .dealer)
        do {
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(Int32(clamping: plan.window * 2))
            try socket.setReceiveHighWaterMark(Int32(clamping: plan.window * 2))
            try leg.credentials?.apply(to: socket)
            try socket.connect(leg.endpoint)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    func run() throws -> ConnectionResult {
        var legList = legs.legs
        var sockets: [Socket] = []
        defer { for socket in sockets { socket.close() } }
        for leg in legList { sockets.append(try open(leg)) }
        // A direct leg's way to the coordinator, with `--retry`: what the worker answers `moved` or
        // `worker-lost`, or leaves unanswered past ``LoadRetries/timeout``, goes there again with its
        // key (the coordinator's road is always right; the key applies it once), and so do the
        // leg's new events until the connection has asked where the machine lives now.
        let detourSocket = try legs.detour.map { try Self.open($0, context: context, highWaterMark: plan.window * 2) }
        defer { detourSocket?.close() }
        // Where each leg's new events go: its own socket until a leg to a worker is told (or
        // finds) that its worker no longer serves it, then the coordinator's, until the
        // connection locates the machine again (``relocate(_:)``).
        var roads = sockets
        var watched = sockets + (detourSocket.map { [$0] } ?? [])
        var legOf = legs.legs.count == 1 ? nil : legs.legOf
        // When to ask the coordinator where the machine lives: set when a leg leaves its road,
        // and again a second after an answer that still sends some addresses by the coordinator
        // (their worker lost, or being handed back), as the `Client` library does (``RouteCore``).
        var relocateAt: ContinuousClock.Instant?
        func leaveRoad(_ leg: Int) {
            guard legList[leg].toWorker else { return }
            if let detourSocket { roads[leg] = detourSocket }
            if legs.relocation != nil, relocateAt == nil { relocateAt = .now + .milliseconds(500) }
        }

        var result = ConnectionResult()
        // Send times in nanoseconds since `start`: plain integers keep the per-request table
        // and the batch under construction on the specialized, copy-free paths.
        var sentAt = InFlightTimes(window: plan.window)
        let clock = ContinuousClock()
        let start = clock.now
        func nanosSinceStart(_ instant: ContinuousClock.Instant) -> Int64 { (instant - start).nanoseconds }
        let deadline = start + plan.duration
        var correlation = UInt64(index) << 48
        var nextAddress = index % max(1, plan.addresses.count)
        let interval = plan.ratePerConnection.map { Duration.seconds(1 / $0) }
        var reported = 0
        var drainStarted: ContinuousClock.Instant?
        var retries = plan.retry && plan.mode != .raw ? LoadRetries(addresses: plan.addresses.count, direct: legs.detour != nil) : nil
        var lastTimeoutScan: Int64 = 0
        // The payload in memory of its own, as the addresses are: appending arrays to the batch
        // cost a retain and a release of each per event.
        let addresses = self.addresses.slices
        let payload = Self.unmanagedCopy(of: plan.payload)
        defer { payload.deallocate() }

        func done(_ now: ContinuousClock.Instant) -> Bool {
            if let count = plan.count { return result.sent >= count }
            // A paced run's schedule ends at the deadline, and every event scheduled before it
            // is sent (late, when the window held it back; its latency says so).
            if let interval { return now >= deadline && start + interval * result.sent >= deadline }
            return now >= deadline
        }

        // Each leg's batch under construction and the intended send time of each of its
        // requests; both keep their capacity from batch to batch. A batch its socket had no room
        // for stays, and goes first in the next turn.
        var pending = Array(repeating: BatchBuilder(), count: legs.legs.count)
        var intendedTimes: [[(UInt64, Int64)]] = Array(repeating: [], count: legs.legs.count)
        var held = 0
        /// Asks the coordinator where the machine lives now and sends each address by that road
        /// from here on: a leg its answer still names goes back to its own socket, a worker new to
        /// the connection (restarted on a new endpoint, or an adopter) gets a leg of its own.
        func relocate(_ relocation: LoadLegs.Relocation) throws {
            let location = try Client(endpoint: relocation.coordinator, timeout: .seconds(2), credentials: relocation.credentials)
                .locate(relocation.machine)
            let fresh = try LoadLegs.direct(plan, location: location, coordinator: relocation.coordinator, credentials: relocation.credentials)
            var index: [Int] = []
            for leg in fresh.legs {
                if let known = legList.firstIndex(where: { $0.endpoint == leg.endpoint }) {
                    roads[known] = sockets[known]
                    index.append(known)
                    continue
                }
                guard legList.count < LoadLegs.maximumLegs else {
                    throw LoadError("the addresses moved to more than \(LoadLegs.maximumLegs) endpoints in one run")
                }
                let socket = try open(leg)
                legList.append(leg)
                sockets.append(socket)
                roads.append(socket)
                pending.append(BatchBuilder())
                intendedTimes.append([])
                index.append(legList.count - 1)
            }
            legOf = fresh.legOf.map { index[$0] }
            watched = sockets + (detourSocket.map { [$0] } ?? [])
            result.relocations += 1
            if fresh.legs.contains(where: { !$0.toWorker }) { relocateAt = .now + .seconds(1) }
        }
        while true {
            var now = clock.now
            var nowNanos = nanosSinceStart(now)
            if let at = relocateAt, now >= at, let relocation = legs.relocation {
                relocateAt = nil
                do {
                    try relocate(relocation)
                } catch {
                    // The coordinator did not answer in time, or the answer could not be used:
                    // the legs stay as they are, and it is asked again.
                    relocateAt = now + .seconds(1)
                }
            }
            // With --linger, what fell due is held until the oldest of it has waited the linger,
            // a batch is full or the schedule ends, so that one message carries it all. Asked
            // as each batch starts. (A batch is full when its last event is due: the same sum the
            // schedule below uses, so rounding cannot tell the two apart and cut a batch short.)
            func releases(_ now: ContinuousClock.Instant) -> Bool {
                guard let interval, plan.linger > .zero else { return true }
                return now >= start + interval * result.sent + plan.linger || start + interval * (result.sent + plan.batch - 1) <= now
                    || (plan.count == nil && now >= deadline)
            }
            if retries != nil {
                let timedOut = try resend(&retries!, on: detourSocket ?? sockets[0], correlation: &correlation, sentAt: &sentAt, addresses: addresses,
                                          payload: payload, now: nowNanos, lastScan: &lastTimeoutScan)
                for address in timedOut { leaveRoad(legOf?[address] ?? 0) }
            }
            /// Sends `leg`'s batch; false when its socket has no room (the batch stays).
            func transmit(_ leg: Int) throws -> Bool {
                guard !pending[leg].isEmpty else { return true }
                guard try send(pending[leg], on: roads[leg]) else { return false }
                for (id, time) in intendedTimes[leg] { sentAt.insert(id, sentAt: time) }
                result.sent += pending[leg].count
                result.messages += 1
                held -= pending[leg].count
                pending[leg].removeAll()
                intendedTimes[leg].removeAll(keepingCapacity: true)
                return true
            }
            // Send while the window (or the schedule) allows, `plan.batch` events per message.
            while held > 0 || releases(now), sentAt.count + held < plan.window, plan.count.map({ result.sent + held < $0 }) ?? true {
                var intended = nowNanos
                if let interval {
                    let scheduled = start + interval * (result.sent + held)
                    // Nothing before its time, and nothing at or after a timed run's deadline.
                    if scheduled > now || (plan.count == nil && scheduled >= deadline) { break }
                    intended = nanosSinceStart(scheduled)
                } else if done(now) {
                    break
                }
                // With --retry, an address with as many events unanswered as its instance keeps
                // holes for waits (``LoadRetries``), and the round robin with it.
                if retries?.mayStart(address: nextAddress) == false { break }
                correlation += 1
                let addressIndex = nextAddress
                let leg = legOf?[addressIndex] ?? 0
                nextAddress = (nextAddress + 1) % addresses.count
                if retries != nil {
                    let keyed = retries!.first(payload, address: addressIndex, correlation: correlation, now: intended)
                    pending[leg].append(kind: plan.kind, flags: plan.flags, correlation: correlation, address: addresses[addressIndex], payload: keyed)
                } else {
                    pending[leg].append(kind: plan.kind, flags: plan.flags, correlation: correlation, address: addresses[addressIndex], payload: payload)
                }
                intendedTimes[leg].append((correlation, intended))
                held += 1
                if pending[leg].count >= plan.batch {
                    guard try transmit(leg) else { break }
                    now = clock.now
                    nowNanos = nanosSinceStart(now)
                }
            }
            for leg in pending.indices { _ = try transmit(leg) }
            if done(now) {
                if sentAt.isEmpty, retries?.isIdle ?? true { break }
                let started = drainStarted ?? now
                drainStarted = started
                // What is still unanswered is lost; resent events get a minute to come back.
                if now - started > (retries == nil ? .seconds(10) : .seconds(60)) { break }
            }
            // Receive what has arrived. When nothing has, wait for a reply, at most until the
            // next scheduled send (or 1 ms), so a paced run sends on time.
            var wait = Duration.milliseconds(1)
            if let interval, !done(now), sentAt.count < plan.window {
                let next = start + interval * result.sent // the oldest event not sent yet
                var wake = next
                if plan.linger > .zero {
                    // Held: until the oldest has waited the linger or the batch fills, whichever
                    // comes first, and at most until the deadline of a timed run.
                    wake = min(next + plan.linger, start + interval * (result.sent + plan.batch - 1))
                    if plan.count == nil { wake = min(wake, max(next, deadline)) }
                }
                wait = min(wait, max(.zero, wake - clock.now))
            }
            guard try Socket.waitUntilAnyReadable(watched, timeout: wait) else { continue }
            /// - Parameter leg: The leg whose own socket it came by (nil: the detour's).
            func record(_ kind: MessageKind, _ correlation: UInt64, arrived: Int64, leg: Int?, _ payload: @autoclosure () -> [UInt8]) {
                guard let sent = sentAt.remove(correlation) else { return }
                if kind == .error {
                    let decoded = try? WireJSON.decode(WireError.self, from: payload())
                    let error = decoded?.code
                    // A direct leg told its worker does not serve it (or lost it) sends what it
                    // has left by the coordinator.
                    if let leg, error == .moved || error == .workerLost { leaveRoad(leg) }
                    // Sent again with its key: counted once, when its last copy is answered.
                    if retries?.answered(correlation, error: error, now: arrived) == false { return }
                    _ = result.latency.record(UInt64(max(0, (arrived - sent) / 1000)))
                    // A copy whose first was applied, its answer no longer kept: applied once.
                    if error == .alreadyApplied {
                        result.acknowledged += 1
                        result.appliedEarlier += 1
                        return
                    }
                    result.failed += 1
                    var code = error?.rawValue ?? "undecodable-error"
                    // `moved` by reason: each says something else about where the leg went.
                    if error == .moved { code += ":\(decoded?.reason?.rawValue ?? "none")" }
                    result.errors[code, default: 0] += 1
                } else {
                    _ = retries?.answered(correlation, error: nil, now: arrived)
                    _ = result.latency.record(UInt64(max(0, (arrived - sent) / 1000)))
                    result.acknowledged += 1
                }
            }
            func recordBatch(_ batch: [UInt8], arrived: Int64, leg: Int?) {
                for envelope in (try? Batch.envelopes(in: batch)) ?? [] {
                    record(envelope.kind, envelope.correlation, arrived: arrived, leg: leg, Array(batch[envelope.payload]))
                }
            }
            func receive(from socket: Socket, leg: Int?) throws {
                var received = 0
                while received < 4096 {
                    if plan.batch > 1 {
                        // Batches come back: their payload is copied into an array once either way.
                        guard let frames = try socket.receive(dontWait: true) else { break }
                        received += 1
                        guard frames.count == 3, let header = try? Header(frames[0]) else { continue }
                        let arrived = nanosSinceStart(clock.now)
                        if header.kind == .batch {
                            recordBatch(frames[2], arrived: arrived, leg: leg)
                        } else {
                            record(header.kind, header.correlation, arrived: arrived, leg: leg, frames[2])
                        }
                    } else {
                        // Replies one at a time, read where libzmq holds them: no arrays made.
                        let got = try socket.receiveBorrowed(dontWait: true) { frames, count in
                            guard count == 3, let header = try? Header(frames[0]) else { return }
                            let arrived = nanosSinceStart(clock.now)
                            if header.kind == .batch {
                                recordBatch(Array(frames[2]), arrived: arrived, leg: leg)
                            } else {
                                record(header.kind, header.correlation, arrived: arrived, leg: leg, Array(frames[2]))
                            }
                        }
                        guard got else { break }
                        received += 1
                    }
                }
            }
            for (leg, socket) in sockets.enumerated() { try receive(from: socket, leg: leg) }
            if let detourSocket { try receive(from: detourSocket, leg: nil) }
            if result.acknowledged + result.failed - reported >= 1000 {
                progress.add(result.acknowledged + result.failed - reported)
                reported = result.acknowledged + result.failed
            }
        }
        progress.add(result.acknowledged + result.failed - reported)
        result.elapsed = clock.now - start
        result.resent = retries?.resent ?? 0
        return result
    }
}

extension LoadConnection {
    /// With `--retry`: takes the copies in flight past ``LoadRetries/timeout`` out of the
    /// window (scanned every 100 ms), then sends the events due again, each alone under a new
    /// correlation with its key as first sent; one that finds no room waits for the next turn.
    /// - Returns: The addresses (by index) of the copies that timed out.
    @discardableResult
    func resend(_ retries: inout LoadRetries, on socket: Socket, correlation: inout UInt64, sentAt: inout InFlightTimes,
                addresses: [UnsafeBufferPointer<UInt8>], payload: UnsafeBufferPointer<UInt8>, now: Int64, lastScan: inout Int64) throws -> [Int] {
        var timedOut: [Int] = []
        if now - lastScan > 100_000_000 {
            lastScan = now
            let (retried, givenUp) = retries.timedOut(now: now)
            // A given-up event stays in the window: the drain deadline counts it lost.
            _ = givenUp
            for (id, address) in retried {
                _ = sentAt.remove(id)
                timedOut.append(address)
            }
        }
        let room = plan.window - sentAt.count
        guard room > 0 else { return timedOut }
        for attempt in retries.takeDue(now: now, atMost: room) {
            correlation += 1
            var builder = BatchBuilder()
            builder.append(kind: plan.kind, flags: plan.flags, correlation: correlation, address: addresses[attempt.address],
                           payload: retries.keyed(payload, attempt))
            guard try send(builder, on: socket) else {
                correlation -= 1
                retries.notSent(attempt, now: now)
                continue
            }
            retries.sentAgain(attempt, correlation: correlation, now: now)
            sentAt.insert(correlation, sentAt: now)
        }
        return timedOut
    }

    /// A DEALER to `detour`'s coordinator, as ``run()`` opens its own socket.
    static func open(_ detour: LoadLegs.Detour, context: ZMQContext, highWaterMark: Int) throws -> Socket {
        try ClientEndpoint.verify(detour.endpoint, curve: detour.credentials != nil)
        let socket = try Socket(context, .dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.setSendHighWaterMark(Int32(clamping: highWaterMark))
        try socket.setReceiveHighWaterMark(Int32(clamping: highWaterMark))
        try detour.credentials?.apply(to: socket)
        try socket.connect(detour.endpoint)
        return socket
    }

    /// Sends what `pending` holds: one event as a plain message straight from the batch's
    /// bytes (no arrays made for its frames), more as one batch message.
    func send(_ pending: BatchBuilder, on socket: Socket) throws -> Bool {
        try pending.withLoneMessage { try socket.send($0, $1, $2, dontWait: true) } ?? socket.send(pending.frames(), dontWait: true)
    }

    static func unmanagedCopy(of bytes: [UInt8]) -> UnsafeBufferPointer<UInt8> {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        return UnsafeBufferPointer(copy)
    }
}

/// A run's addresses as bytes, one after the other in one block, each read through a slice of
/// it: built once per connection before its clock starts. A million fresh keys made two
/// allocations each inside the timed run, and each event then read its address from a block
/// of its own, missing the cache: both counted against the system under load.
final class AddressArena: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<UInt8>
    let slices: [UnsafeBufferPointer<UInt8>]

    init(_ addresses: [String]) {
        storage = .allocate(capacity: max(1, addresses.reduce(0) { $0 + $1.utf8.count }))
        var slices: [UnsafeBufferPointer<UInt8>] = []
        slices.reserveCapacity(addresses.count)
        var offset = 0
        for address in addresses {
            let count = storage[offset...].initialize(fromContentsOf: address.utf8) - offset
            slices.append(UnsafeBufferPointer(rebasing: storage[offset ..< offset + count]))
            offset += count
        }
        self.slices = slices
    }

    deinit { storage.deallocate() }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
