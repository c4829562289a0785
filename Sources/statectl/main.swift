import StateStore
print(StateStore.latestSchemaVersion)
