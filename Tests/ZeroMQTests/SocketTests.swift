import Foundation
import CZeroMQ
import GroveTestSupport
import Testing
@testable import ZeroMQ

/// `.ownThread`: sockets block on receive and send timeouts, contexts on terminating.
@Suite(.timeLimit(.minutes(2)), .ownThread) struct SocketTests {
    @Test func bindingAnAbstractEndpointTwiceNamesTheEndpoint() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = uniqueEndpoint()
        let first = try makeSocket(context, .router)
        let second = try makeSocket(context, .router)
        defer { first.close(); second.close() }
        try first.bind(endpoint)

        let error = #expect(throws: ZMQError.self) { try second.bind(endpoint) }

        #expect(error?.errno == EADDRINUSE)
        #expect(error?.operation == "bind \(endpoint)")
        #expect(error?.description.contains(endpoint) == true)
        #expect(error?.message.contains("choose another endpoint") == true)
    }

    @Test func lastEndpointReportsTheRealPortOfAWildcardBind() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try makeSocket(context, .router)
        defer { socket.close() }
        #expect(socket.lastEndpoint == "")

        try socket.bind("tcp://127.0.0.1:*")

        let endpoint = socket.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(Int(endpoint.split(separator: ":").last ?? "") ?? 0 > 0)
    }

    @Test func receiveTimeoutReturnsNilWhenNothingArrives() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let client = try makeSocket(context, .dealer)
        defer { client.close() }
        try client.setReceiveTimeout(milliseconds: 20)
        try client.connect(uniqueEndpoint())

        #expect(try client.receive(dontWait: false) == nil)
        #expect(try client.receive(dontWait: true) == nil)
        #expect(client.canReceive == false)
    }

    @Test func immediateClientWithoutPeerCannotQueue() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let client = try makeSocket(context, .dealer)
        defer { client.close() }
        try client.setImmediate(true)
        try client.setSendTimeout(milliseconds: 20)
        try client.connect(uniqueEndpoint())

        #expect(try client.send([bytes("anyone?")], dontWait: false) == false)
        #expect(try client.send([bytes("anyone?")], dontWait: true) == false)
    }

    @Test func multipartFramesArriveWholeIncludingEmptyOnes() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = uniqueEndpoint()
        let left = try makeSocket(context, .pair)
        let right = try makeSocket(context, .pair)
        defer { left.close(); right.close() }
        try right.setReceiveTimeout(milliseconds: 5000)
        try left.bind(endpoint)
        try right.connect(endpoint)
        let message: [[UInt8]] = [[], [1, 2, 3], [], [0], []]

        #expect(try left.send(message, dontWait: false))
        #expect(try left.send([[]], dontWait: false))

        #expect(try right.receive(dontWait: false) == message)
        #expect(try right.receive(dontWait: false) == [[]])
    }

    /// A ROUTER shares the routing id of its last few senders instead of copying it per
    /// message: with more senders than it keeps, taking turns, and ids of one length that differ
    /// only in their last byte, every message still names its own sender.
    @Test func aRouterNamesEachSenderWithMoreSendersThanItKeeps() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let (router, endpoint) = try makeRouter(context)
        try router.setReceiveTimeout(milliseconds: 5000)
        let names = (0 ..< Socket.recentRoutingIDLimit + 3).map { "peer-\($0)" }
        let dealers = try names.map { try makeDealer(context, id: $0, endpoint: endpoint) }
        defer { router.close(); dealers.forEach { $0.close() } }

        var expected: [[[UInt8]]] = []
        for round in 0 ..< 3 {
            // Each sender's message waits until it arrived, so the order across senders is known.
            for (index, dealer) in dealers.enumerated() where round != 1 || index % 2 == 0 {
                let body = bytes("\(names[index]) \(round)")
                #expect(try dealer.send([body], dontWait: false))
                expected.append([bytes(names[index]), body])
                #expect(try router.receive(dontWait: false) == expected.last)
            }
        }
    }

    /// Frames past ``Socket/maximumFrames`` are dropped unread, but counted: the coordinator's
    /// refusal of a 10-frame message said "7 frames" (the frames kept) until the count came along.
    @Test func framesPastTheMaximumAreDroppedButCounted() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = uniqueEndpoint()
        let left = try makeSocket(context, .pair)
        let right = try makeSocket(context, .pair)
        defer { left.close(); right.close() }
        try right.setReceiveTimeout(milliseconds: 5000)
        right.maximumFrames = 8
        try left.bind(endpoint)
        try right.connect(endpoint)
        let message: [[UInt8]] = (0 ..< 10).map { [UInt8($0)] }
        #expect(try left.send(message, dontWait: false))
        #expect(try left.send(Array(message.prefix(3)), dontWait: false))

        let long = try #require(try right.receiveInbound(dontWait: false, as: 7))
        #expect(long.frames == Array(message.prefix(8)))
        #expect(long.frameCount == 10)
        #expect(long.socket == 7)
        let short = try #require(try right.receiveInbound(dontWait: false, as: 7))
        #expect(short.frames.count == 3)
        #expect(short.frameCount == 3)
    }

    @Test func waitUntilReadableTimesOutThenSeesAMessage() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = uniqueEndpoint()
        let left = try makeSocket(context, .pair)
        let right = try makeSocket(context, .pair)
        defer { left.close(); right.close() }
        try left.bind(endpoint)
        try right.connect(endpoint)

        #expect(try right.waitUntilReadable(timeout: .microseconds(300)) == false)
        #expect(try right.waitUntilReadable(timeout: .zero) == false)
        #expect(try left.send([[7]], dontWait: false))

        #expect(try right.waitUntilReadable(timeout: .seconds(5)))
        #expect(try right.receive(dontWait: true) == [[7]])
        #expect(try right.waitUntilReadable(timeout: .zero) == false)
    }

    @Test func subscriberReceivesOnlyItsPrefix() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let endpoint = uniqueEndpoint()
        let publisher = try makeSocket(context, .pub)
        let subscriber = try makeSocket(context, .sub)
        defer { publisher.close(); subscriber.close() }
        try publisher.bind(endpoint)
        try subscriber.subscribe(bytes("a."))
        try subscriber.setReceiveTimeout(milliseconds: 10)
        try subscriber.connect(endpoint)

        // A subscription takes a moment to reach the publisher; publish until one message lands.
        var received: [[[UInt8]]] = []
        for round in 0..<500 where received.isEmpty {
            _ = try publisher.send([bytes("b.\(round)")], dontWait: true)
            _ = try publisher.send([bytes("a.\(round)"), bytes("body")], dontWait: true)
            if let message = try subscriber.receive(dontWait: false) { received.append(message) }
        }
        while let message = try subscriber.receive(dontWait: true) { received.append(message) }

        #expect(!received.isEmpty)
        #expect(received.allSatisfy { $0.count == 2 && $0[0].starts(with: bytes("a.")) && $0[1] == bytes("body") })
    }

    @Test func closedSocketThrowsNotASocketAndCloseIsIdempotent() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try makeSocket(context, .dealer)
        socket.close()
        socket.close()

        let error = #expect(throws: ZMQError.self) { try socket.connect("ipc://@nowhere") }
        #expect(error?.errno == ENOTSOCK)
        #expect(throws: ZMQError(errno: ENOTSOCK, operation: "")) { _ = try socket.send([[1]], dontWait: true) }
        #expect(throws: ZMQError(errno: ENOTSOCK, operation: "")) { _ = try socket.receive(dontWait: true) }
        #expect(socket.lastEndpoint == "")
    }

    @Test func invalidInputIsReportedNotIgnored() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try makeSocket(context, .dealer)
        defer { socket.close() }

        #expect(throws: ZMQError(errno: EINVAL, operation: "")) { _ = try socket.send([], dontWait: true) }
        let error = #expect(throws: ZMQError.self) { try socket.connect("nonsense://x") }
        #expect(error?.operation == "connect nonsense://x")
        #expect(throws: ZMQError(errno: EINVAL, operation: "")) { try socket.setRouterMandatory(true) }
        #expect(throws: ZMQError(errno: EINVAL, operation: "")) { try socket.setRoutingID([]) }
    }

    /// Each setter reaches libzmq with its own option and value: read back from libzmq (the
    /// options libzmq cannot report are checked by what they do, below).
    @Test func optionsAreSetToTheirValues() throws {
        let context = try ZMQContext(ioThreads: 2)
        defer { context.terminate() }
        let router = try makeSocket(context, .router)
        defer { router.close() }
        try router.setLinger(milliseconds: 7)
        try router.setHeartbeat(interval: 200, timeout: 600, ttl: 1000)
        try router.setMaxMessageSize(1 << 20)
        try router.setReconnectInterval(milliseconds: 150)
        try router.setSendHighWaterMark(11)
        try router.setReceiveHighWaterMark(12)
        try router.setRoutingID(bytes("me"))
        try router.setImmediate(true)
        try router.setSendTimeout(milliseconds: 33)
        try router.setReceiveTimeout(milliseconds: 44)

        #expect(try router.intOption(ZMQ_LINGER) == 7)
        #expect(try router.intOption(ZMQ_HEARTBEAT_IVL) == 200)
        #expect(try router.intOption(ZMQ_HEARTBEAT_TIMEOUT) == 600)
        #expect(try router.intOption(ZMQ_HEARTBEAT_TTL) == 1000)
        #expect(try router.int64Option(ZMQ_MAXMSGSIZE) == 1 << 20)
        #expect(try router.intOption(ZMQ_RECONNECT_IVL) == 150)
        #expect(try router.intOption(ZMQ_SNDHWM) == 11)
        #expect(try router.intOption(ZMQ_RCVHWM) == 12)
        #expect(try router.bytesOption(ZMQ_ROUTING_ID) == bytes("me"))
        #expect(try router.intOption(ZMQ_IMMEDIATE) == 1)
        #expect(try router.intOption(ZMQ_SNDTIMEO) == 33)
        #expect(try router.intOption(ZMQ_RCVTIMEO) == 44)
    }

    /// `ROUTER_MANDATORY` (write-only in libzmq): a send to an unknown peer is refused with
    /// `EHOSTUNREACH` instead of being dropped silently.
    @Test func routerMandatoryRefusesUnknownPeers() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let lax = try makeSocket(context, .router)
        let strict = try makeSocket(context, .router)
        defer { lax.close(); strict.close() }
        try strict.setRouterMandatory(true)

        #expect(try lax.send([bytes("nobody"), bytes("x")], dontWait: true), "dropped silently without the option")
        let error = #expect(throws: ZMQError.self) { _ = try strict.send([bytes("nobody"), bytes("x")], dontWait: true) }
        #expect(error?.errno == EHOSTUNREACH)
    }

    /// `ROUTER_HANDOVER` (write-only in libzmq): a second peer with a routing id in use takes
    /// it over, so the router hears it and replies reach it. Without the option the router
    /// would ignore the newcomer.
    @Test func routerHandoverGivesARoutingIDToTheNewestPeer() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let router = try makeSocket(context, .router)
        defer { router.close() }
        try router.setRouterHandover(true)
        try router.setReceiveTimeout(milliseconds: 10_000)
        let endpoint = uniqueEndpoint()
        try router.bind(endpoint)
        let first = try makeDealer(context, id: "me", endpoint: endpoint)
        defer { first.close() }
        #expect(try first.send([bytes("first")], dontWait: false))
        #expect(try router.receive(dontWait: false) == [bytes("me"), bytes("first")])

        let second = try makeDealer(context, id: "me", endpoint: endpoint)
        defer { second.close() }
        try second.setReceiveTimeout(milliseconds: 10_000)
        #expect(try second.send([bytes("second")], dontWait: false))
        #expect(try router.receive(dontWait: false) == [bytes("me"), bytes("second")])
        #expect(try router.send([bytes("me"), bytes("reply")], dontWait: false))
        #expect(try second.receive(dontWait: false) == [bytes("reply")])
    }

    @Test func errorsCompareByCodeAndClassifyThemselves() {
        let unreachable = ZMQError(errno: EHOSTUNREACH, operation: "send to router peer \"w1\"")
        #expect(unreachable == ZMQError(errno: EHOSTUNREACH, operation: "other"))
        #expect(unreachable != ZMQError(errno: EAGAIN, operation: "send to router peer \"w1\""))
        #expect(unreachable.isPeerUnreachable && !unreachable.isWouldBlock)
        #expect(ZMQError(errno: EAGAIN, operation: "").isWouldBlock)
        #expect(unreachable.description.hasPrefix("send to router peer \"w1\": "))
        #expect(unreachable.message.contains("treat it as gone"))
    }
}

/// Reads options back from libzmq, to check that a setter set what it names.
extension Socket {
    func intOption(_ option: Int32) throws -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last("get option \(option)") }
        return value
    }

    func int64Option(_ option: Int32) throws -> Int64 {
        var value: Int64 = 0
        var size = MemoryLayout<Int64>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last("get option \(option)") }
        return value
    }

    func bytesOption(_ option: Int32) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        var size = buffer.count
        guard zmq_getsockopt(handle, option, &buffer, &size) == 0 else { throw ZMQError.last("get option \(option)") }
        return Array(buffer.prefix(size))
    }
}
