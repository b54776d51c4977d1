public import GroveCluster
public import GroveWire
import ZeroMQ

extension Client {
    /// The road a ``Client`` sends requests to machines by.
    public enum Route: String, Sendable, CaseIterable {
        /// Every request through the coordinator's clients endpoint.
        case coordinator
        /// Requests to machines straight to the worker that runs them, once located; the rest,
        /// and what no worker serves directly, through the coordinator.
        case direct
    }

    /// Where one request goes.
    enum Road: Equatable {
        case coordinator
        case direct(RouteCore.Target)

        var target: RouteCore.Target? {
            guard case .direct(let target) = self else { return nil }
            return target
        }
    }

    /// This client's own `locate` requests go under correlations from here up, far above any
    /// the core numbers, so that their answers are never taken for a request's.
    static let locateCorrelations: UInt64 = 1 << 62
    /// At most this many direct sockets stay open; past it they are all closed and made again.
    static let maximumDirectSockets = 64

    /// The road for a request of `kind` to `address` now, locating its machine first if
    /// nothing is known of it.
    func road(for kind: MessageKind, address: String) -> Road {
        guard route == .direct, kind.authority.servedDirect, !address.isEmpty else { return .coordinator }
        let now = ContinuousClock.now
        if case .locate(let machine) = roads.route(address, now: now) { locateForRoad(machine) }
        // Asked without an instant: a location just answered is never stale.
        switch roads.route(address) {
        case .direct(let target): return .direct(target)
        case .coordinator, .locate: return .coordinator
        }
    }

    /// Asks the coordinator where `machine` lives and tells ``roads``. A coordinator that does
    /// not answer leaves nothing recorded: the request goes through it, and fails as it would.
    func locateForRoad(_ machine: String) {
        let correlation = nextLocate
        nextLocate = nextLocate == UInt64.max >> 1 ? Self.locateCorrelations : nextLocate + 1
        do {
            try transmit(WireMessage(Header(.locate, correlation: correlation), address: machine))
            while true {
                let reply = try WireMessage(frames: receive(.locate, address: machine))
                // Anything else is a late answer to a request given up on (its copy was resent).
                guard reply.header.correlation == correlation else { continue }
                guard reply.header.kind != .error else {
                    roads.locateFailed(machine: machine, code: try? WireJSON.decode(WireError.self, from: reply.payload).code)
                    return
                }
                do {
                    roads.located(try WireJSON.decode(Location.self, from: reply.payload), at: ContinuousClock.now)
                } catch {
                    roads.locateFailed(machine: machine, code: nil)
                }
                return
            }
        } catch {
            return
        }
    }

    /// The socket for `target`'s direct endpoint, made and connected on first use, speaking
    /// CURVE to the key the coordinator gave for it when this client speaks CURVE.
    func directSocket(for target: RouteCore.Target) throws(WireError) -> Socket {
        if let socket = directSockets[target.endpoint] { return socket }
        if directSockets.count >= Self.maximumDirectSockets {
            for socket in directSockets.values { socket.close() }
            directSockets.removeAll()
        }
        try ClientEndpoint.verify(target.endpoint, curve: credentials != nil)
        let heartbeat = roads.locations.values.lazy.compactMap { $0 }.first { $0.workers.contains { $0.endpoint == target.endpoint } }?.heartbeatMs ?? 1500
        let wait = min(Self.milliseconds(timeout), Int32(clamping: max(1, heartbeat)))
        let socket: Socket
        do {
            socket = try Socket(context, .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(1000)
            try socket.setReceiveHighWaterMark(1000)
            try socket.setImmediate(true)
            // A worker that takes nothing within its heartbeat timeout (stopped, or gone with its
            // endpoint) is located again: nothing was sent (``transmit(_:kind:address:on:until:)``).
            try socket.setSendTimeout(milliseconds: wait)
            try socket.setReceiveTimeout(milliseconds: wait)
            try socket.setHeartbeat(interval: max(1, wait / 4), timeout: wait, ttl: wait * 2)
            if let credentials {
                guard let serverKey = target.serverKey, let speaking = credentials.speaking(to: serverKey) else {
                    socket.close()
                    throw WireError(.untrustedEndpoint, "worker \(target.worker) serves \(target.endpoint) without a CURVE key, "
                        + "while this client speaks CURVE; use --route coordinator, or check the worker's registration")
                }
                try speaking.apply(to: socket)
            }
            try socket.connect(target.endpoint)
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.unreachable, "cannot connect to worker \(target.worker) at \(target.endpoint): \(error)")
        }
        directSockets[target.endpoint] = socket
        return socket
    }

    /// Sends `message` for `kind` to `address` by `road`. A direct socket that takes nothing
    /// within the location's heartbeat timeout sent nothing (its worker is stopped, or was killed
    /// and its endpoint is gone): the machine is located again and the message goes by the road
    /// that answer gives (the worker's new endpoint, or the coordinator), until `deadline`.
    func transmit(_ message: WireMessage, kind: MessageKind, address: String, on road: inout Road,
                  until deadline: ContinuousClock.Instant) throws(WireError) {
        while true {
            guard case .direct(let target) = road else { return try transmit(message) }
            let socket = try directSocket(for: target)
            let taken: Bool
            do {
                taken = try socket.send(message.frames, dontWait: false)
            } catch {
                throw WireError(.unreachable, "sending to worker \(target.worker) at \(target.endpoint) failed: \(error)")
            }
            if taken { return }
            guard ContinuousClock.now < deadline else {
                throw WireError(.unreachable, "worker \(target.worker) at \(target.endpoint) took no request within \(timeout)")
            }
            directSockets.removeValue(forKey: target.endpoint)?.close()
            roads.silence(on: target, machine: MachineAddress.machine(of: address))
            road = self.road(for: kind, address: address)
        }
    }

    /// Waits for the next message on `road`: up to `timeout` through the coordinator, up to the
    /// location's heartbeat timeout (or `timeout`, if shorter) on a direct socket.
    func receive(_ kind: MessageKind, address: String, on road: Road) throws(WireError) -> [[UInt8]] {
        guard case .direct(let target) = road else { return try receive(kind, address: address) }
        let socket = try directSocket(for: target)
        let frames: [[UInt8]]?
        do {
            frames = try socket.receive(dontWait: false)
        } catch {
            throw WireError(.unreachable, "receiving from worker \(target.worker) at \(target.endpoint) failed: \(error)")
        }
        guard let frames else {
            throw WireError(.timeout, "no reply from worker \(target.worker) at \(target.endpoint) for \(kind.name) \(address)")
        }
        return frames
    }

    /// `target` went silent on a request to `address`: locates the machine again and judges
    /// whether the worker is the one registered now.
    func judgeSilence(of target: RouteCore.Target, address: String) -> RouteCore.AfterSilence {
        let machine = MachineAddress.machine(of: address)
        roads.silence(on: target, machine: machine)
        locateForRoad(machine)
        guard case let location?? = roads.locations[machine] else { return .keepWaiting }
        return RouteCore.judgeSilence(of: target, in: location)
    }

    /// The `moved` error in `frames` when they answer `correlation` with one.
    static func moved(in frames: [[UInt8]], answering correlation: UInt64) -> WireError? {
        guard let reply = try? WireMessage(frames: frames), reply.header.kind == .error, reply.header.correlation == correlation,
              let error = try? WireJSON.decode(WireError.self, from: reply.payload), error.code == .moved else { return nil }
        return error
    }

    static func milliseconds(_ duration: Duration) -> Int32 {
        max(1, Int32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
    }
}
