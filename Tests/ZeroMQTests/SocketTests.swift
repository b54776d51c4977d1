import Foundation
import Testing
@testable import ZeroMQ

@Suite struct SocketTests {
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

    @Test func optionsAcceptTheirValues() throws {
        let context = try ZMQContext(ioThreads: 2)
        defer { context.terminate() }
        let router = try makeSocket(context, .router)
        defer { router.close() }
        try router.setRouterMandatory(true)
        try router.setRouterHandover(true)
        try router.setHeartbeat(interval: 200, timeout: 600, ttl: 1000)
        try router.setMaxMessageSize(1 << 20)
        try router.setReconnectInterval(milliseconds: 100)
        try router.setSendHighWaterMark(10)
        try router.setReceiveHighWaterMark(10)
        try router.setRoutingID(bytes("me"))
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
