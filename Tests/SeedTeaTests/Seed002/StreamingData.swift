// Seed 002, SwiftTea's "Advanced Patterns": "Streaming Data", as written.
// Only the imports are added. `LocationState` and the CoreLocation types (`CLLocation`,
// `CLLocationManager`, `LocationDelegate`) are the reader's: CoreLocation exists on Apple's
// systems only, so Support/ReaderTypes.swift declares stand-ins that replay fixes.
import Grove
import GroveTea

enum LocationAction: Sendable {
case startLocationUpdates
case stopLocationUpdates
case locationUpdate(CLLocation)
}

func locationReducer(state: LocationState, action: LocationAction) -> (LocationState, Effect<LocationAction>) {
switch action {
case .startLocationUpdates:
let locationStream = AsyncStream<LocationAction> { continuation in
let locationManager = CLLocationManager()
let delegate = LocationDelegate { location in
continuation.yield(.locationUpdate(location))
}

locationManager.delegate = delegate
locationManager.startUpdatingLocation()

continuation.onTermination = { _ in
locationManager.stopUpdatingLocation()
}
}

return (state, .stream(locationStream, id: "location-updates"))

case .stopLocationUpdates:
// Cancel the stream declaratively from the reducer
return (state, .cancel("location-updates"))

case .locationUpdate(let location):
var newState = state
newState.currentLocation = location
return (newState, .none)
}
}
