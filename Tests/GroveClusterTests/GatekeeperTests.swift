import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing
import ZeroMQ

private func request(_ domain: Gatekeeper.Endpoint, address: String = "127.0.0.1", mechanism: String,
                     key: CurveKey? = nil) -> [[UInt8]] {
    var frames = [Array("1.0".utf8), Array("7".utf8), Array(domain.rawValue.utf8), Array(address.utf8), [], Array(mechanism.utf8)]
    if let key { frames.append(key.bytes) }
    return frames
}

private func topology(curve: Bool, tcp: Bool = true) -> Topology {
    let scheme = tcp ? "tcp://127.0.0.1:" : "ipc:///run/t/"
    return Topology(
        name: "t", coordinator: .init(clients: scheme + "1", workers: scheme + "2", events: scheme + "3"),
        workers: [.init(name: "edge", external: true, key: "edge.key"), .init(name: "main")], machines: [],
        security: curve
            ? .init(coordinatorKey: "c.key_secret", clients: [
                .init(key: "ops.key", roles: [.admin]), .init(key: "board.key", roles: [.read], machines: ["auth"]),
                .init(key: "reader.key", roles: [.read]),
            ])
            : .init(insecure: tcp))
}

@Suite("Gatekeeper", .timeLimit(.minutes(2)))
struct GatekeeperTests {
    let edge = try! CurveKeyPair.generate().publicKey
    let ops = try! CurveKeyPair.generate().publicKey
    let board = try! CurveKeyPair.generate().publicKey
    let reader = try! CurveKeyPair.generate().publicKey
    let stranger = try! CurveKeyPair.generate().publicKey

    func curveGatekeeper() -> Gatekeeper {
        Gatekeeper(topology: topology(curve: true), workerKeys: ["edge": edge], clientKeys: [ops, board, reader], uid: 1000)
    }

    @Test func curveAdmitsEachKeyOnlyWhereTheTopologyPutsIt() {
        let gate = curveGatekeeper()
        #expect(gate.answer(request(.workers, mechanism: "CURVE", key: edge)).admitted)
        #expect(!gate.answer(request(.workers, mechanism: "CURVE", key: ops)).admitted)
        #expect(!gate.answer(request(.workers, mechanism: "CURVE", key: stranger)).admitted)
        #expect(gate.answer(request(.clients, mechanism: "CURVE", key: ops)).admitted)
        #expect(!gate.answer(request(.clients, mechanism: "CURVE", key: edge)).admitted)
        // Watching takes a read role over every machine.
        #expect(gate.answer(request(.events, mechanism: "CURVE", key: reader)).admitted)
        #expect(!gate.answer(request(.events, mechanism: "CURVE", key: board)).admitted)
        #expect(!gate.answer(request(.events, mechanism: "CURVE", key: ops)).admitted)
    }

    @Test func anAdmittedKeyBecomesTheUserIDAndBackAPrincipal() throws {
        let gate = curveGatekeeper()
        let answer = gate.answer(request(.workers, mechanism: "CURVE", key: edge))
        #expect(answer.frames.map { String(decoding: $0, as: UTF8.self) } == ["1.0", "7", "200", "OK", edge.z85 + " 127.0.0.1", ""])
        #expect(gate.principal(userID: edge.z85 + " 127.0.0.1", on: .workers) == .worker(group: "edge"))
        #expect(gate.principal(userID: edge.z85, on: .workers) == .worker(group: "edge"))
        #expect(gate.principal(userID: edge.z85, on: .clients) == nil)
        #expect(gate.principal(userID: ops.z85, on: .clients) == .client([.init(key: "ops.key", roles: [.admin])]))
        #expect(gate.principal(userID: "nonsense", on: .clients) == nil)
    }

    @Test func aRefusalSaysWhoAndWhyWithoutAnySecret() throws {
        let answer = curveGatekeeper().answer(request(.workers, address: "10.1.2.3", mechanism: "CURVE", key: ops))
        #expect(answer.frames[2] == Array("400".utf8))
        let line = try #require(answer.refusal)
        #expect(line.contains("10.1.2.3") && line.contains(ops.z85) && line.contains("client key"))
    }

    @Test func keysMadeForStartedWorkersComeAndGo() {
        var gate = curveGatekeeper()
        let spawned = try! CurveKeyPair.generate().publicKey
        #expect(!gate.answer(request(.workers, mechanism: "CURVE", key: spawned)).admitted)
        gate.admit(worker: spawned, group: "main")
        #expect(gate.answer(request(.workers, mechanism: "CURVE", key: spawned)).admitted)
        #expect(gate.principal(userID: spawned.z85, on: .workers) == .worker(group: "main"))
        gate.forget(worker: spawned)
        #expect(!gate.answer(request(.workers, mechanism: "CURVE", key: spawned)).admitted)
    }

    @Test func withCurveAPlainConnectionIsRefused() {
        #expect(!curveGatekeeper().answer(request(.clients, address: "localhost:1000:1000:42", mechanism: "NULL")).admitted)
    }

    @Test func ipcAdmitsOnlyTheLaunchingUser() throws {
        let gate = Gatekeeper(topology: topology(curve: false, tcp: false), workerKeys: [:], clientKeys: [], uid: 1000)
        let mine = gate.answer(request(.clients, address: "localhost:1000:1000:4242", mechanism: "NULL"))
        #expect(mine.admitted)
        #expect(gate.principal(userID: String(decoding: mine.frames[4], as: UTF8.self), on: .clients) == .trusted)
        let other = gate.answer(request(.workers, address: "localhost:65534:65534:77", mechanism: "NULL"))
        #expect(!other.admitted)
        #expect(try #require(other.refusal).contains("uid 65534"))
        #expect(!gate.answer(request(.events, address: "localhost", mechanism: "NULL")).admitted)
        #expect(!gate.answer(request(.events, address: "localhost:1000:1000:1", mechanism: "PLAIN")).admitted)
    }

    @Test func insecureTcpAdmitsEveryone() {
        let gate = Gatekeeper(topology: topology(curve: false, tcp: true), workerKeys: [:], clientKeys: [], uid: 1000)
        #expect(gate.answer(request(.workers, address: "192.0.2.9", mechanism: "NULL")).admitted)
    }

    @Test func malformedRequestsAreAnsweredAndRefused() {
        let gate = curveGatekeeper()
        #expect(!gate.answer([Array("2.0".utf8), Array("1".utf8)]).admitted)
        #expect(!gate.answer(request(.workers, mechanism: "CURVE")).admitted)
        var unknown = request(.workers, mechanism: "NULL")
        unknown[2] = Array("elsewhere".utf8)
        #expect(!gate.answer(unknown).admitted)
    }
}
