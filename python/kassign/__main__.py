import sys

from kassign.cli import main

sys.exit(main())
