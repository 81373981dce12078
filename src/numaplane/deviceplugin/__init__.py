"""numaplane.deviceplugin."""
