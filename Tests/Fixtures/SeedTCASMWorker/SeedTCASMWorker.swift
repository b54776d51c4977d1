import GroveWorker
import SeedTCASMFeatures

/// A worker hosting seed 004's `MyFeature` and `ErrorHandlingFeature` as GroveTCA reducers
/// (GroveEndToEndTests' SeedTCASMWorkerTests).
@main enum SeedTCASMWorker {
    static func main() async {
        var worker = WorkerConfiguration()
        registerSeedFeatures(on: &worker)
        await Worker.main(worker)
    }
}
