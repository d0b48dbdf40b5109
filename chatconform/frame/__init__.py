"""What a check and a contract are made of: verdict statuses, run profiles, the checked
inputs and the shapes of files read back, the input snapshot, the guarded call, the one call
path into an implementation, the stop a signal asks for, the check registry, the contract
base classes, what a contract declares to join the lifecycle, and their wire format."""
