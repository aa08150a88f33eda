/* No code: the DLL only forwards its exports (api-ms-win-core-synch-l1-2-0.def). */
