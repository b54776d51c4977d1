@testable import GroveWorker
import Synchronization
import Testing
import ZeroMQ

/// The worker's loop as a test runs it: nothing runs until `runUntilIdle()`, and what the worker
/// starts there (its tasks, their awaits, its pauses) stays there instead of the shared pool.
@Suite(.timeLimit(.minutes(2)))
struct DrivenLoopTests {
    /// An actor living on the loop, as the runtime and its hosts do.
    actor OnLoop {
        let loop: DrivenLoop
        /// What ran, read by the test without running the loop.
        let marks = Mutex<[String]>([])
        init(_ loop: DrivenLoop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
        func mark(_ what: String) { marks.withLock { $0.append(what) } }
        /// A plain task of the actor's, as the runtime starts its recovery chunks: it starts on
        /// the loop with no task executor preference.
        func startPausing() {
            Task { await self.pauseThenMark() }
        }
        func pauseThenMark() async {
            await WorkerLoop.driven(loop).pause()
            mark("after the pause")
        }
    }

    /// Nonisolated async work: without a task executor preference it runs on the shared pool.
    nonisolated static func elsewhere() async -> String { "elsewhere" }

    @Test func aSpawnedTaskRunsOnlyWhenTheTestRunsTheLoopAndNeverLeavesIt() {
        let loop = DrivenLoop()
        let actor = OnLoop(loop)
        WorkerLoop.driven(loop).spawn {
            let text = await Self.elsewhere()
            await actor.mark(text)
        }
        #expect(!loop.isIdle, "queued, not run")
        #expect(actor.marks.withLock { $0 } == [])
        loop.runUntilIdle()
        #expect(actor.marks.withLock { $0 } == ["elsewhere"], "one run took the task through its await and back")
        #expect(loop.isIdle)
    }

    @Test func aPauseGoesOnAtTheNextRunOnly() {
        let loop = DrivenLoop()
        let actor = OnLoop(loop)
        WorkerLoop.driven(loop).spawn { await actor.pauseThenMark() }
        loop.runUntilIdle()
        #expect(actor.marks.withLock { $0 } == [], "paused in this run")
        #expect(!loop.isIdle, "a paused task still waits")
        loop.runUntilIdle()
        #expect(actor.marks.withLock { $0 } == ["after the pause"])
    }

    @Test func aPlainTaskOfTheLoopsActorComesBackFromItsPauseOnTheLoop() {
        let loop = DrivenLoop()
        let actor = OnLoop(loop)
        loop.execute { actor.assumeIsolated { $0.startPausing() } }
        loop.runUntilIdle()
        #expect(actor.marks.withLock { $0 } == [], "paused in this run")
        loop.runUntilIdle()
        #expect(actor.marks.withLock { $0 } == ["after the pause"], "resumed on the shared pool, not in the run")
    }

    @Test func postedMessagesAreKeptInOrderUntilTaken() {
        let loop = DrivenLoop()
        WorkerLoop.driven(loop).post(Outbound(socket: 0, frames: [[1]]))
        WorkerLoop.driven(loop).post(Outbound(socket: 0, frames: [[2]]))
        #expect(loop.hasPosted)
        #expect(loop.takePosted().map(\.frames) == [[[1]], [[2]]])
        #expect(!loop.hasPosted)
    }

    @Test func codeIsIsolatedToTheLoopOnlyWhileTheTestRunsIt() {
        let loop = DrivenLoop()
        #expect(loop.isIsolatingCurrentContext() == false)
        let inside = Mutex<Bool?>(nil)
        loop.execute { inside.withLock { $0 = loop.isIsolatingCurrentContext() } }
        loop.runUntilIdle()
        #expect(inside.withLock { $0 } == true)
    }
}
